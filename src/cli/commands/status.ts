import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { measureStoreClockOffset } from '../../cluster/clock-probe.js';
import { collectClusterStatus, FAILED_LISTED } from '../../observe/cluster-status.js';
import { timesJson } from '../../observe/json-times.js';
import { QUEUE_SUMMARY_URIS } from '../../observe/queue-summary.js';
import { systemClock } from '../../runtime/clock.js';
import { TaskStore } from '../../store/task-store.js';
import { configOption } from '../config-option.js';
import { FAILED_SHOWN, URIS_SHOWN, formatStatus } from '../format-status.js';
import { loadCliConfig } from '../load-cli-config.js';
import { seeHelp } from './see-help.js';

/** How often `status --watch` refreshes. */
const STATUS_WATCH_MS = 2000;

export function statusCommand(cli: Argv): Argv {
  return cli.command(
    'status',
    "show the whole cluster's queue, read from the shared store",
    (y) =>
      y
        .fail(seeHelp('status'))
        .options({
          ...configOption,
          json: { type: 'boolean', default: false, describe: "stable JSON (see README), with each URI's recent history" },
          watch: { type: 'boolean', default: false, describe: 'refresh the table every 2 s until Ctrl-C' },
          all: {
            type: 'boolean',
            default: false,
            describe: `list every URI and every failed task (default: the newest ${FAILED_SHOWN} failed in the table, ${FAILED_LISTED} in --json)`,
          },
          limit: { type: 'number', default: URIS_SHOWN, describe: 'how many URIs the table lists, the longest waiting first (0: all)' },
        })
        .example('refrelay status --config /etc/refrelay/replication.config', '')
        .example('refrelay status --json', '')
        .example('refrelay status --all   # every URI, and every failed task with its reason', '')
        .example('refrelay status --limit 10   # the 10 URIs that waited longest', ''),
    async (args) => {
      if (args.watch && args.json) throw new UsageError('status: --watch shows the table; use --json without --watch (or poll it)');
      if (!Number.isInteger(args.limit) || args.limit < 0) throw new UsageError(`status: --limit must be a whole number ≥ 0, got ${String(args.limit)}`);
      const config = loadCliConfig({ config: args.config });
      // Counting the store itself reads one task of every waiting folder: all of them in one listing.
      const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse', learnPerPass: Number.POSITIVE_INFINITY });
      await store.open();
      const style = process.stdout.isTTY === true ? 'boxed' : 'plain';
      for (;;) {
        // Node liveness is judged on the store's clock; a read-only store cannot be probed.
        const storeClockOffsetMs = await measureStoreClockOffset(store.paths.nodes, `status-${process.pid}`, systemClock).catch(() => null);
        const status = await collectClusterStatus(config, store, systemClock, {
          storeClockOffsetMs,
          ...(args.all ? { failedLimit: Number.POSITIVE_INFINITY } : {}),
          // A node's summary names the longest-waiting URIs only; more than that, or all, is read from the store.
          exact: args.all || args.limit === 0 || args.limit > QUEUE_SUMMARY_URIS,
        });
        if (args.json) {
          process.stdout.write(timesJson(status));
          return;
        }
        // Clear the screen and home the cursor only on a terminal; in a pipe each refresh follows the last.
        const clear = args.watch && style === 'boxed' ? '\u001b[2J\u001b[H' : '';
        const shown = args.all ? { failedShown: Number.POSITIVE_INFINITY, urisShown: 0 } : { urisShown: args.limit };
        process.stdout.write(`${clear}${formatStatus(status, style, shown)}`);
        if (!args.watch) return;
        process.stdout.write(`(every 2 s; Ctrl-C to stop) ${new Date().toISOString()}\n${style === 'plain' ? '\n' : ''}`);
        await new Promise((resolve) => setTimeout(resolve, STATUS_WATCH_MS));
      }
    },
  );
}
