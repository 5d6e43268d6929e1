import { NotStartedError } from '../errors.js';
import { reportError } from './exit-codes.js';

/**
 * A command module that cannot be loaded (a chunk of dist/bundle or a dependency missing) means
 * refrelay did not start: exit 5 with one line, which the git hook tells apart from a failure of
 * refrelay's own (`intake/hook-script.ts`).
 */
async function load<T>(importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (error) {
    throw new NotStartedError(error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error), { cause: error });
  }
}

// `enqueue` is on the git hook path, so it skips loading yargs and every other command.
async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'enqueue' && !argv.includes('--help') && !argv.includes('-h')) {
    const { runEnqueue } = await load(() => import('./enqueue-command.js'));
    // Exit once decided: a store write still hanging on a dead NFS mount (it was spooled) must not
    // hold the developer's git push. Everything enqueue reports is written and fsynced by then.
    return runEnqueue(argv.slice(1)).then(
      (code) => process.exit(code),
      (error: unknown) => process.exit(reportError(error)),
    );
  }
  const { runCommands } = await load(() => import('./commands.js'));
  return runCommands(argv);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportError(error);
  },
);
