import yargs from 'yargs';
import { configCommand } from './commands/config.js';
import { daemonCommand } from './commands/daemon.js';
import { enqueueCommand } from './commands/enqueue.js';
import { failedCommand } from './commands/failed.js';
import { hookCommand } from './commands/hook.js';
import { importGerritQueueCommand } from './commands/import-gerrit-queue.js';
import { initCommand } from './commands/init.js';
import { replicateCommand } from './commands/replicate.js';
import { retryCommand } from './commands/retry.js';
import { seeHelp } from './commands/see-help.js';
import { statusCommand } from './commands/status.js';
import { verifyCommand } from './commands/verify.js';
import { waitCommand } from './commands/wait.js';
import { EXIT_OK } from './exit-codes.js';
import { VERSION } from './version.js';

/** In the order `refrelay --help` lists them; commands/<command>.ts holds the options, help text and handler of each. */
const COMMANDS = [
  configCommand,
  enqueueCommand,
  statusCommand,
  initCommand,
  daemonCommand,
  hookCommand,
  replicateCommand,
  verifyCommand,
  waitCommand,
  retryCommand,
  failedCommand,
  importGerritQueueCommand,
];

export async function runCommands(argv: string[]): Promise<number> {
  let exitCode = EXIT_OK;
  const setExit = (code: number): void => {
    exitCode = code;
  };
  const top = yargs(argv)
    .scriptName('refrelay')
    .version(VERSION)
    .strict()
    .exitProcess(false)
    .demandCommand(1, 'name a command')
    .recommendCommands()
    .fail(seeHelp(''));
  await COMMANDS.reduce((cli, command) => command(cli, setExit), top)
    .example('refrelay config check --config /etc/refrelay/replication.config', '')
    .example('refrelay daemon --config /etc/refrelay/replication.config', '')
    .example('refrelay status', '')
    .epilogue(
      'Exit codes: 0 ok, 1 failed work, 2 usage error, 3 invalid configuration, 4 destinations unreachable (verify --fix, wait), ' +
        '5 refrelay could not start (a build file or dependency of its installation is missing).',
    )
    .parseAsync();
  return exitCode;
}
