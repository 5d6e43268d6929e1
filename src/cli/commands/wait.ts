import type { Argv } from 'yargs';
import { parseDuration } from '../../config/duration.js';
import { UsageError } from '../../errors.js';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function waitCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command(
    'wait',
    'block until every destination holds a ref at a value (what a CI job runs before it builds from a mirror)',
    (y) =>
      y
        .fail(seeHelp('wait'))
        .options({
          ...configOption,
          project: { type: 'string', demandOption: true, describe: 'the project, as named under replication.basePath' },
          ref: { type: 'string', demandOption: true, describe: 'the full ref name, e.g. refs/heads/main' },
          value: { type: 'string', describe: "the object id to wait for (default: the master's current value of the ref)" },
          remote: { type: 'string', array: true, describe: 'only this remote, repeatable (default: every remote that replicates the ref)' },
          timeout: { type: 'string', default: '10m', describe: 'give up after this long (e.g. 90s, 10m)' },
          json: { type: 'boolean', default: false, describe: 'machine-readable report (see README)' },
        })
        .example('refrelay wait --project team/app --ref refs/heads/main', '')
        .example('refrelay wait --project team/app --ref refs/heads/main --value "$GIT_COMMIT" --remote dr --timeout 5m', '')
        .epilogue(
          'Progress comes from the shared store; each destination is asked once, by ls-remote, when the store says its work is done. ' +
            'Exit codes: 0 every destination holds the ref at the value, 1 a destination lags at the timeout (or its task is in failed/), ' +
            '2 usage error, 3 invalid configuration, 4 a destination could not be reached to confirm.',
        ),
    async (args) => {
      const timeoutMs = parseDuration(args.timeout, 'seconds');
      if (typeof timeoutMs === 'string') throw new UsageError(`wait: --timeout: ${timeoutMs}`);
      const { runWait } = await import('../wait-command.js');
      setExit(
        await runWait({
          config: args.config,
          project: args.project,
          ref: args.ref,
          value: args.value,
          remotes: (args.remote ?? []).map(String),
          timeoutMs,
          json: args.json,
        }),
      );
    },
  );
}
