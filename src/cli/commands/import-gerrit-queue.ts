import type { Argv } from 'yargs';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function importGerritQueueCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command(
    'import-gerrit-queue <dir>',
    "take over the tasks persisted by Gerrit's replication plugin (its events directory, ref-updates/ or waiting/ folder)",
    (y) =>
      y
        .fail(seeHelp('import-gerrit-queue'))
        .positional('dir', { type: 'string', demandOption: true, describe: "Gerrit's events directory, its ref-updates folder, or its waiting/ folder" })
        .options({
          ...configOption,
          'dry-run': { type: 'boolean', default: false, describe: 'report what would be imported and skipped; write nothing' },
          remove: { type: 'boolean', default: false, describe: 'delete each Gerrit file once its task is durable in the store' },
          'include-running': {
            type: 'boolean',
            default: false,
            describe: 'import running/ too (pushes under way when Gerrit stopped): only after the plugin is stopped on every primary',
          },
        })
        .example('refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --dry-run', '')
        .example('refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --remove', '')
        .example('refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --include-running --remove   # plugin stopped everywhere', '')
        .epilogue(
          'Exit codes: 0 every task file imported, 1 some files skipped (reasons on stderr) or the store could not be written, ' +
            '2 DIR missing or not a Gerrit queue folder, 3 invalid configuration.',
        ),
    async (args) => {
      const { runImportGerritQueue } = await import('../import-gerrit-queue-command.js');
      setExit(
        await runImportGerritQueue({
          config: args.config,
          dir: args.dir,
          dryRun: args['dry-run'],
          remove: args.remove,
          includeRunning: args['include-running'],
        }),
      );
    },
  );
}
