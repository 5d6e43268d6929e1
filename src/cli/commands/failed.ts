import type { Argv } from 'yargs';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function failedCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command('failed', 'list failed tasks with their reasons, or drop them out of failed/', (failed) =>
    failed
      .fail(seeHelp('failed'))
      .command(
        'list',
        'every failed task, newest first: key, remote, URI, project, refs, since when, and why',
        (y: Argv) =>
          y
            .fail(seeHelp('failed list'))
            .options({ ...configOption, json: { type: 'boolean', default: false, describe: 'machine-readable list (see README)' } })
            .example('refrelay failed list', ''),
        async (args) => {
          const { runFailedList } = await import('../failed-command.js');
          setExit(await runFailedList({ config: args.config as string | undefined, json: args.json === true }));
        },
      )
      .command(
        'drop [keys..]',
        'move failed tasks to failed/dropped/ (kept for replication.retention, then deleted): neither retried nor listed any more',
        (y: Argv) =>
          y
            .fail(seeHelp('failed drop'))
            .positional('keys', { type: 'string', array: true, describe: 'task keys, as failed list shows them' })
            .options({
              ...configOption,
              all: { type: 'boolean', default: false, describe: 'every failed task (alone)' },
              remote: { type: 'string', describe: 'only tasks of this remote' },
              uri: { type: 'string', describe: 'only tasks whose destination URI contains this text' },
              project: { type: 'string', describe: 'only tasks of these projects (exact, prefix/* or ^regex)' },
              'dry-run': { type: 'boolean', default: false, describe: 'show what would be dropped; move nothing' },
            })
            .example('refrelay failed drop --remote dr --dry-run', '')
            .example('refrelay failed drop 3f786850e387550fdab836ed7e6dc881de23001b', '')
            .epilogue(
              'Selectors given together must all match. ' +
                'Exit codes: 0 done (also when nothing matched: "Nothing to drop"), 2 no selector, --all with another, or a malformed key or pattern.',
            ),
        async (args) => {
          const { runFailedDrop } = await import('../failed-command.js');
          setExit(
            await runFailedDrop({
              config: args.config as string | undefined,
              all: args.all === true,
              remote: args.remote as string | undefined,
              uri: args.uri as string | undefined,
              project: args.project as string | undefined,
              keys: ((args.keys as unknown[] | undefined) ?? []).map(String),
              dryRun: args['dry-run'] === true,
            }),
          );
        },
      )
      .demandCommand(1, 'name a failed command')
      .example('refrelay failed list', '')
      .example('refrelay failed drop --remote dr --dry-run', ''),
  );
}
