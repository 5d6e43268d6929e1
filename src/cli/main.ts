import { reportError } from './exit-codes.js';

// `enqueue` is on the git hook path, so it skips loading yargs and every other command.
async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'enqueue' && !argv.includes('--help') && !argv.includes('-h')) {
    const { runEnqueue } = await import('./enqueue-command.js');
    // Exit once decided: a store write still hanging on a dead NFS mount (it was spooled) must not
    // hold the developer's git push. Everything enqueue reports is written and fsynced by then.
    return runEnqueue(argv.slice(1)).then(
      (code) => process.exit(code),
      (error: unknown) => process.exit(reportError(error)),
    );
  }
  const { runCommands } = await import('./commands.js');
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
