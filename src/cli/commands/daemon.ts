import type { Argv } from 'yargs';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function daemonCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command(
    'daemon',
    'run this node: distribute, lock and push queued tasks until SIGTERM/SIGINT',
    (y) =>
      y
        .fail(seeHelp('daemon'))
        .options({
          ...configOption,
          'node-id': { type: 'string', describe: 'override replication.nodeId' },
          drain: { type: 'boolean', default: false, describe: 'exit once nothing is left that this node may take (1 if tasks were moved to failed/)' },
          'log-level': { choices: ['debug', 'info', 'warn', 'error'] as const, default: 'info' as const, describe: 'log verbosity' },
          'log-format': { choices: ['json', 'pretty'] as const, describe: 'JSON lines, or lines for people (default: pretty on a terminal, else json)' },
        })
        .example('refrelay daemon --config /etc/refrelay/replication.config', '')
        .example('refrelay daemon --drain   # deliver what is queued, then exit', ''),
    async (args) => {
      const { runDaemon } = await import('../daemon-command.js');
      setExit(await runDaemon({ config: args.config, nodeId: args['node-id'], drain: args.drain, logLevel: args['log-level'], logFormat: args['log-format'] }));
    },
  );
}
