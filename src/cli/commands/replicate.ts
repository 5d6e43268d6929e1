import type { Argv } from 'yargs';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function replicateCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command(
    'replicate [patterns..]',
    'queue a full sync of projects (exact, prefix/* or ^regex) to their destinations',
    (y) =>
      y
        .fail(seeHelp('replicate'))
        .positional('patterns', { type: 'string', array: true, describe: 'project patterns' })
        .options({
          ...configOption,
          all: { type: 'boolean', default: false, describe: 'every project under basePath' },
          remote: { type: 'string', array: true, describe: 'only this remote, repeatable' },
          url: { type: 'string', describe: 'only destination URLs containing this text' },
          now: { type: 'boolean', default: false, describe: 'skip replicationDelay' },
          wait: { type: 'boolean', default: false, describe: 'wait until done, show progress and a result table; exit 1 if any failed' },
        })
        .example('refrelay replicate --all --now --wait', '')
        .example("refrelay replicate 'team/*' --remote dr", ''),
    async (args) => {
      const { runReplicate } = await import('../replicate-command.js');
      setExit(
        await runReplicate({
          config: args.config,
          patterns: (args.patterns ?? []).map(String),
          all: args.all,
          remotes: (args.remote ?? []).map(String),
          url: args.url,
          now: args.now,
          wait: args.wait,
        }),
      );
    },
  );
}
