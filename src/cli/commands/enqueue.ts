import type { Argv } from 'yargs';
import { ENQUEUE_OPTIONS } from '../enqueue-options.js';
import { seeHelp } from './see-help.js';

export function enqueueCommand(cli: Argv): Argv {
  return cli.command(
    'enqueue',
    'queue a ref update durably in the shared store (used by git hooks)',
    (y) =>
      y
        .fail(seeHelp('enqueue'))
        .options(Object.fromEntries(ENQUEUE_OPTIONS.map(({ name, ...option }) => [name, option])))
        .example('refrelay enqueue --project team/app --ref refs/heads/main', '')
        .example('refrelay enqueue --stdin   # in a post-receive hook; project from GIT_DIR', '')
        .epilogue(
          'When the store cannot be written (not mounted, full, read-only, I/O errors, no answer within replication.spoolAfter), ' +
            'the update is spooled in replication.spoolPath, exit 0 with a warning, and a daemon of the store on this machine forwards it. ' +
            'Exit 1 only when the spool fails too.',
        ),
    async () => {
      // Reached only for --help (main.ts routes enqueue straight to its lean path).
    },
  );
}
