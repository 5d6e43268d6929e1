import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { systemClock } from '../../runtime/clock.js';
import { TaskStore } from '../../store/task-store.js';
import { configOption } from '../config-option.js';
import { initUpgrade } from '../init-upgrade.js';
import { loadCliConfig } from '../load-cli-config.js';
import { seeHelp } from './see-help.js';

export function initCommand(cli: Argv): Argv {
  return cli.command(
    'init',
    'create the shared store at replication.storePath (once per cluster), or adopt one an earlier refrelay made; --upgrade moves a store of the previous layout to this one',
    (y) =>
      y
        .fail(seeHelp('init'))
        .options({
          ...configOption,
          upgrade: {
            type: 'boolean',
            default: false,
            describe: 'move a store of layout 1 (flat waiting/) to layout 2 (a waiting folder per URI); every node stopped first',
          },
          force: { type: 'boolean', default: false, describe: 'with --upgrade: go on although node records in nodes/ look fresh' },
        })
        .example('refrelay init --config /etc/refrelay/replication.config', ''),
    async (args) => {
      if (args.force && !args.upgrade) throw new UsageError('init: --force goes with --upgrade');
      const config = loadCliConfig({ config: args.config });
      if (args.upgrade) {
        process.stdout.write(await initUpgrade(config, systemClock, { force: args.force }));
        return;
      }
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
