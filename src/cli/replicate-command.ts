import cliProgress from 'cli-progress';
import { nodeAliveWithinMs, nodeBeats } from '../cluster/live-nodes.js';
import { NodeSilence } from '../cluster/node-silence.js';
import { UsageError } from '../errors.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { planFullSync, queueFullSync } from '../intake/replicate.js';
import { redactUrl } from '../runtime/redact.js';
import { TaskStore } from '../store/task-store.js';
import { uriKey } from '../task/task.js';
import { EXIT_FAILED, EXIT_OK } from './exit-codes.js';
import { formatAge } from './format-status.js';
import { loadCliConfig } from './load-cli-config.js';
import { settle, type Tracked } from './replicate-settle.js';
import { plural } from '../runtime/plural.js';

export interface ReplicateArgs {
  config?: string | undefined;
  patterns: string[];
  all: boolean;
  remotes: string[];
  url?: string | undefined;
  now: boolean;
  wait: boolean;
  pollMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `refrelay replicate`: queue full syncs, optionally wait for them with progress and a result table. */
export async function runReplicate(args: ReplicateArgs): Promise<number> {
  const config = loadCliConfig({ config: args.config });
  if (config.basePath === undefined) throw new UsageError(`replicate: replication.basePath is not set in ${config.file}; it is where the projects are found`);
  const projects = await discoverProjects(config.basePath);
  const tasks = planFullSync(config, projects, { patterns: args.patterns, all: args.all, remotes: args.remotes, urlSubstring: args.url });
  if (tasks.length === 0) {
    process.stdout.write('Nothing to replicate\n');
    return EXIT_OK;
  }
  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  const startedAt = Date.now();
  const queued = await queueFullSync(config, store, tasks, args.now, startedAt);
  const projectCount = new Set(tasks.map((task) => task.project)).size;
  const urls = plural(tasks.length, 'destination URL');
  process.stdout.write(`queued full sync of ${plural(projectCount, 'project')} to ${urls}\n`);
  if (!args.wait) return EXIT_OK;

  const tracked: Tracked[] = queued.map((item) => ({ key: item.key, uri: item.task.uri, uriKey: uriKey(item.task.uri), state: 'queued' }));
  const total = tracked.length;
  const bar = process.stdout.isTTY
    ? new cliProgress.SingleBar(
        { format: 'replicate [{bar}] {value}/{total} done, {failed} failed | {rate}/s | ETA {eta_formatted}', hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(total, 0, { failed: 0, rate: '0.0' });
  // Without a daemon nothing pushes: said once, rather than a wait that looks stuck.
  const silentMs = nodeAliveWithinMs(config);
  const silence = new NodeSilence(
    () => nodeBeats(store.paths.nodes).catch(() => new Map<string, number>()),
    () => performance.now(),
    silentMs,
  );
  let lastLine = 0;
  for (;;) {
    await settle(store, tracked, startedAt);
    if (await silence.silentNow()) {
      process.stderr.write(`replicate: no node of this store has beaten for ${formatAge(silentMs)}: the full syncs wait until a refrelay daemon of it runs\n`);
    }
    const done = tracked.filter((item) => item.state === 'done').length;
    const failed = tracked.filter((item) => item.state === 'failed').length;
    const rate = ((done + failed) / Math.max(1, (Date.now() - startedAt) / 1000)).toFixed(1);
    if (bar !== undefined) bar.update(done + failed, { failed, rate });
    else if (Date.now() - lastLine >= 2000 || done + failed === total) {
      lastLine = Date.now();
      process.stdout.write(`replicate: ${done + failed}/${total} finished (${done} done, ${failed} failed), ${rate}/s\n`);
    }
    if (done + failed === total) break;
    await sleep(args.pollMs ?? 500);
  }
  bar?.stop();
  process.stdout.write(`\n${resultTable(tracked)}\nfinished in ${formatAge(Date.now() - startedAt)}\n`);
  return tracked.some((item) => item.state === 'failed') ? EXIT_FAILED : EXIT_OK;
}

function resultTable(tracked: readonly Tracked[]): string {
  const rows = [['DESTINATION', 'RESULT'], ...tracked.map((item) => [redactUrl(item.uri), item.state === 'done' ? 'in sync' : `FAILED: ${item.reason ?? ''}`])];
  const width = Math.max(...rows.map((row) => row[0]!.length));
  return rows.map((row) => `${row[0]!.padEnd(width)}  ${row[1]}`).join('\n');
}
