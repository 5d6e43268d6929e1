import { failedTaskView, type FailedTaskStatus } from '../observe/failed-view.js';
import type { Clock } from '../runtime/clock.js';
import type { TaskStore } from '../store/task-store.js';
import { drainSummary } from './format-failed.js';
import { plural } from '../runtime/plural.js';

/** Parked tasks a drain names one by one; the rest are counted. */
export const DRAIN_SUMMARY_SHOWN = 10;

/**
 * The tasks this node put in failed/ since `since` (its own clock, as the reason records are
 * written with it), oldest first: read back from the store, where they are what an operator will
 * retry or drop, rather than remembered by the push jobs.
 */
export async function parkedSince(store: Pick<TaskStore, 'listFailed'>, nodeId: string, since: number, clock: Clock): Promise<FailedTaskStatus[]> {
  const now = clock.now();
  return (await store.listFailed())
    .filter((item) => item.reason?.nodeId === nodeId && item.reason.at >= since)
    .map((item) => failedTaskView(item, now))
    .sort((a, b) => a.failedAt - b.failedAt || a.taskKey.localeCompare(b.taskKey));
}

/** The text `daemon --drain` prints on stderr before it exits 1; a store that cannot be listed is said so, not thrown. */
export async function drainReport(store: Pick<TaskStore, 'listFailed'>, nodeId: string, since: number, clock: Clock, movedToFailed: number): Promise<string> {
  try {
    return drainSummary(await parkedSince(store, nodeId, since, clock), movedToFailed, DRAIN_SUMMARY_SHOWN);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `refrelay: ${plural(movedToFailed, 'task')} moved to failed/ during this run; could not list them: ${reason}\n`;
  }
}
