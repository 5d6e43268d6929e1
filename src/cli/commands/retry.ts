import type { Argv } from 'yargs';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function retryCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command(
    'retry',
    'move failed tasks back to waiting/ and clear the backoff (retry state) of their URIs and of every matching URI',
    (y) =>
      y
        .fail(seeHelp('retry'))
        .options({
          ...configOption,
          all: { type: 'boolean', default: false, describe: 'every failed task and every URI in backoff' },
          remote: { type: 'string', describe: 'only tasks and URIs of this remote' },
          uri: { type: 'string', describe: 'only tasks and URIs whose destination URI contains this text' },
        })
        .example('refrelay retry --remote dr', '')
        .example('refrelay retry --uri github.com/example/app', ''),
    async (args) => {
      const { runRetry } = await import('../retry-command.js');
      setExit(await runRetry({ config: args.config, all: args.all, remote: args.remote, uri: args.uri }));
    },
  );
}
