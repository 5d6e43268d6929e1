import { formatDuration } from '../config/duration.js';
import { failedTaskView, newestFirst, type FailedTaskStatus } from '../observe/failed-view.js';
import { systemClock } from '../runtime/clock.js';
import { TaskStore } from '../store/task-store.js';
import type { Task } from '../task/task.js';
import { UsageError } from '../errors.js';
import { EXIT_OK } from './exit-codes.js';
import { failedListRows, plainTable } from './format-failed.js';
import { keysNotFound, parseFailedSelector, selectsFailed, type FailedSelectorArgs } from './failed-selector.js';
import { loadCliConfig } from './load-cli-config.js';
import { operatorName } from './operator.js';
import { plural } from '../runtime/plural.js';

/** Version of the `failed list --json` shape. */
export const FAILED_LIST_FORMAT_VERSION = 1;

type Write = (text: string) => void;
const stdout: Write = (text) => process.stdout.write(text);

function openStore(configPath: string | undefined): { store: TaskStore; nodeId: string; retentionMs: number } {
  const config = loadCliConfig({ config: configPath });
  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  return { store, nodeId: config.nodeId, retentionMs: config.retentionMs };
}

/** `refrelay failed list`: every failed task, newest first, with its reason and since when. */
export async function runFailedList(args: { config?: string | undefined; json: boolean }, write: Write = stdout): Promise<number> {
  const { store } = openStore(args.config);
  const now = systemClock.now();
  const tasks = (await store.listFailed()).map((item) => failedTaskView(item, now)).sort(newestFirst);
  if (args.json) write(`${JSON.stringify({ version: FAILED_LIST_FORMAT_VERSION, failed: tasks }, null, 2)}\n`);
  else write(tasks.length === 0 ? 'No failed tasks\n' : `${plainTable(failedListRows(tasks))}\n`);
  return EXIT_OK;
}

export interface FailedDropArgs extends FailedSelectorArgs {
  readonly config?: string | undefined;
  readonly dryRun: boolean;
}

/**
 * `refrelay failed drop`: the selected failed tasks out of failed/, into a drop folder kept for
 * `replication.retention`. Exit 0 whether or not anything matched, as `retry`: the end state asked
 * for holds either way, and running it twice is no error; a task key that matched nothing is said.
 */
export async function runFailedDrop(args: FailedDropArgs, write: Write = stdout): Promise<number> {
  const selector = parseFailedSelector(args);
  if ('problem' in selector) throw new UsageError(`failed drop: ${selector.problem}`);
  const { store, nodeId, retentionMs } = openStore(args.config);
  const now = systemClock.now();
  const seen = new Set<string>();
  const wanted = (key: string, task: Task): boolean => {
    seen.add(key);
    return selectsFailed(selector, key, task);
  };
  let chosen: FailedTaskStatus[];
  let folder: string | undefined;
  if (args.dryRun) {
    chosen = (await store.listFailed()).filter((item) => wanted(item.key, item.task)).map((item) => failedTaskView(item, now));
  } else {
    const outcome = await store.dropFailed((item) => wanted(item.key, item.task), { by: operatorName(), via: 'cli', nodeId });
    chosen = outcome.dropped.map((item) => failedTaskView(item, now));
    folder = outcome.folder;
  }
  chosen.sort(newestFirst);
  const lines: string[] = [];
  if (chosen.length === 0) lines.push('Nothing to drop');
  else if (args.dryRun) lines.push(`would drop ${plural(chosen.length, 'failed task')}:`);
  else {
    const kept = `deleted after ${formatDuration(retentionMs)}, replication.retention`;
    lines.push(`dropped ${plural(chosen.length, 'failed task')} into failed/dropped/${folder ?? '?'} (${kept}):`);
  }
  if (chosen.length > 0) lines.push(plainTable(failedListRows(chosen)));
  for (const key of keysNotFound(selector, seen)) lines.push(`no failed task ${key}`);
  write(`${lines.join('\n')}\n`);
  return EXIT_OK;
}
