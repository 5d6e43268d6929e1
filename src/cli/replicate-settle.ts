import type { TaskStore } from '../store/task-store.js';

/** One queued full sync that `refrelay replicate --wait` follows to its end. */
export interface Tracked {
  readonly key: string;
  readonly uri: string;
  readonly uriKey: string;
  state: 'queued' | 'done' | 'failed';
  reason?: string;
  /** Seen in neither waiting/ nor running/ by the last pass. */
  absent?: boolean;
  /** Seen in failed/ by the last pass before its reason record was written. */
  failedWithoutReason?: boolean;
}

/** What following the tasks reads of the store. */
export type SettleStore = Pick<TaskStore, 'waitingNamesOf' | 'flatWaitingNames' | 'listRunning' | 'listFailed'>;

/**
 * A task is done once its file left waiting/ and running/ without landing in failed/, as seen by
 * two passes in a row: the listings are not one snapshot, and a task put back from running/ to
 * waiting/ (a retry) between them is in neither.
 */
export async function settle(store: SettleStore, tracked: Tracked[], since: number): Promise<void> {
  const open = tracked.filter((item) => item.state === 'queued');
  if (open.length === 0) return;
  const [pending, running, failed] = await Promise.all([
    store.waitingNamesOf(new Set(open.map((item) => item.uriKey))),
    store.listRunning(),
    store.listFailed(),
  ]);
  for (const lock of running) for (const task of lock.tasks) pending.add(task.name);
  // A lock this node may not list may hold any task of its URI: none of them counts as done yet.
  const unreadableUris = new Set(running.filter((lock) => lock.unreadable).map((lock) => lock.lockName));
  const failedByName = new Map(failed.map((item) => [item.name, item]));
  // Seen in no folder: it may wait flat at the top of waiting/ until a node sorts it (a task a
  // stale lookup sent there). Looked for only then, one `lstat` each.
  const unseen = open.map((item) => `${item.key}.json`).filter((name) => !pending.has(name) && !failedByName.has(name));
  for (const name of await store.flatWaitingNames(unseen)) pending.add(name);
  // Refs a destination rejected are parked as new tasks of the same URI.
  const failedUris = new Map(failed.filter((item) => (item.reason?.at ?? 0) >= since).map((item) => [item.uriKey, item]));
  for (const item of open) {
    const name = `${item.key}.json`;
    const wholeTask = failedByName.get(name);
    if (wholeTask !== undefined) {
      // The reason record is written just after the task moves: give it one more pass.
      if (wholeTask.reason === undefined && item.failedWithoutReason !== true) {
        item.failedWithoutReason = true;
        continue;
      }
      item.state = 'failed';
      item.reason = wholeTask.reason?.reason ?? 'failed (no reason recorded)';
    } else if (pending.has(name) || unreadableUris.has(item.uriKey)) {
      item.absent = false;
    } else if (item.absent !== true) {
      item.absent = true;
    } else {
      const parked = failedUris.get(item.uriKey);
      item.state = parked === undefined ? 'done' : 'failed';
      if (parked !== undefined) item.reason = parked.reason?.reason ?? 'some refs failed';
    }
  }
}
