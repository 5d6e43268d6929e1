import { shownRemote } from '../task/names.js';
import type { FailedTask } from '../store/store-types.js';
import { redactText, redactUrl } from '../runtime/redact.js';

/** One task file in failed/, with why it is there (credentials redacted), as status, the page and `failed list` show it. */
export interface FailedTaskStatus {
  uriKey: string;
  /** The task file's name, `<taskKey>.json`. */
  name: string;
  /** What `refrelay failed drop TASKKEY` takes. */
  taskKey: string;
  uri: string;
  remote: string;
  project: string;
  refs: string[];
  reason: string | null;
  /** When it was given up on (epoch ms): the reason's time, else the file's mtime. */
  failedAt: number;
  failedAgeMs: number;
}

/**
 * The reason's `at` is when the task was given up on (the failing node's clock); the file's mtime
 * is not, for a task moved whole to failed/ keeps its first enqueue's mtime. A reason without a
 * usable time (missing file, a crash between the two writes) falls back to the mtime.
 */
export function failedTaskView(item: FailedTask, storeNow: number): FailedTaskStatus {
  const at = item.reason?.at;
  const failedAt = typeof at === 'number' && Number.isFinite(at) ? at : item.mtimeMs;
  return {
    uriKey: item.uriKey,
    name: item.name,
    taskKey: item.key,
    uri: redactUrl(item.task.uri),
    remote: shownRemote(item.task.remote),
    project: item.task.project,
    refs: [...item.task.refs],
    reason: item.reason?.reason === undefined ? null : redactText(item.reason.reason),
    failedAt,
    failedAgeMs: Math.max(0, storeNow - failedAt),
  };
}

/** Newest first; the task key breaks ties, so every listing of the same store has one order. */
export function newestFirst(a: FailedTaskStatus, b: FailedTaskStatus): number {
  return b.failedAt - a.failedAt || a.taskKey.localeCompare(b.taskKey);
}
