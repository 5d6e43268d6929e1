import type { TaskStore } from '../store/task-store.js';
import { FULL_SYNC_REF } from '../task/task-model.js';
import { backoffsOf, errorLine, type BackoffStatus } from './backoff-status.js';
import { readClusterHistory } from './uri-history.js';

/** What the store says of one destination URI: the work it still has and what became of the last. */
export interface StoreProgress {
  /** Task files waiting for the URI. */
  readonly waiting: number;
  /** A lock of the URI holds claimed tasks: a node is pushing it. */
  readonly running: boolean;
  /** The URI's retry state, when its last push failed. */
  readonly backoff: BackoffStatus | undefined;
  /** Why a task of the ref (or a full sync of the project) is in failed/, redacted, one line. */
  readonly failed: string | undefined;
  /** Store-clock time of the newest push result of the URI in any node's history; 0: none. */
  readonly lastResultAt: number;
}

/** The results in a node's history that say a push to the URI happened. */
const RESULT_EVENTS = new Set(['pushed', 'push-failed', 'failed']);

export type ProgressStore = Pick<TaskStore, 'waitingNamesOf' | 'listRunning' | 'listFailed' | 'readUriState'>;

/**
 * One read of the store for the URIs `refrelay wait` follows: their waiting folders, running/,
 * failed/, their retry states and every node's history. Names and small records only, no task
 * file of the waiting queue is opened. Files that do not parse count as absent (they are untrusted).
 */
export async function readStoreProgress(
  store: ProgressStore,
  storePath: string,
  followed: { readonly uriKeys: readonly string[]; readonly project: string; readonly ref: string },
  storeNow: number,
): Promise<Map<string, StoreProgress>> {
  const { project, ref } = followed;
  const uriKeys = [...new Set(followed.uriKeys)];
  const [waiting, running, failed, states, history] = await Promise.all([
    Promise.all(uriKeys.map(async (key) => (await store.waitingNamesOf([key])).size)),
    store.listRunning(),
    store.listFailed(uriKeys),
    Promise.all(uriKeys.map(async (uriKey) => ({ uriKey, state: await store.readUriState(uriKey).catch(() => undefined) }))),
    readClusterHistory(storePath),
  ]);
  const backoffs = new Map(backoffsOf(states, storeNow).map((backoff) => [backoff.uriKey, backoff]));
  const progress = new Map<string, StoreProgress>();
  uriKeys.forEach((uriKey, i) => {
    const failedTask = failed.find(
      (item) => item.uriKey === uriKey && item.task.project === project && (item.task.refs.includes(ref) || item.task.refs.includes(FULL_SYNC_REF)),
    );
    const results = (history[uriKey]?.events ?? []).filter((event) => RESULT_EVENTS.has(event.event));
    progress.set(uriKey, {
      waiting: waiting[i]!,
      // A lock this node may not list may hold the URI's claimed tasks: counted as a push under way.
      running: running.some((lock) => lock.lockName === uriKey && (lock.tasks.length > 0 || lock.unreadable)),
      backoff: backoffs.get(uriKey),
      failed: failedTask === undefined ? undefined : errorLine(failedTask.reason?.reason ?? 'failed (no reason recorded)'),
      lastResultAt: Math.max(0, ...results.map((event) => event.at)),
    });
  });
  return progress;
}
