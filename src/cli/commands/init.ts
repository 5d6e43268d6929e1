import type { Argv } from 'yargs';
import { TaskStore } from '../../store/task-store.js';
import { configOption } from '../config-option.js';
import { loadCliConfig } from '../load-cli-config.js';
import { seeHelp } from './see-help.js';

export function initCommand(cli: Argv): Argv {
  return cli.command(
    'init',
    'create the shared store at replication.storePath (once per cluster), or adopt one an earlier refrelay made',
    (y) =>
      y
        .fail(seeHelp('init'))
        .options({ ...configOption })
        .example('refrelay init --config /etc/refrelay/replication.config', ''),
    async (args) => {
      const config = loadCliConfig({ config: args.config });
      const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId });
      const opening = await store.init();
      const said = {
        created: 'created the refrelay store at',
        adopted: 'adopted the earlier refrelay store (wrote its marker) at',
        existing: 'already a refrelay store:',
      } as const;
      process.stdout.write(`${said[opening]} ${config.storePath}\n`);
    },
  );
}
