import type { ReplicationConfig } from '../config/types.js';
import { waitingByUri, type WaitingUri } from '../schedule/waiting-uris.js';
import type { TaskStore, WaitingFolder } from '../store/task-store.js';
import type { StatusOptions } from './cluster-status.js';
import type { NodeStatus } from './node-records.js';
import { freshestSummary, QUEUE_SUMMARY_EVERY_MS, readQueueSummaries, summaryUris, type QueueSummary } from './queue-summary.js';

/** A summary older than this many distributionIntervals (plus its writing period) is not used. */
const QUEUE_SUMMARY_MAX_AGE_INTERVALS = 3;
/**
 * Below this many waiting URIs the store is read itself: that takes well under a second, and is
 * exact to the moment, where a summary is up to its writing period old.
 */
export const QUEUE_SUMMARY_MIN_URIS = 1000;

/** A summary's longest-waiting URIs, as the per-URI count of a status. */
function listedIn(summary: QueueSummary): WaitingUri[] {
  return summary.oldest.map(({ remote, uri, uriKey, tasks, oldestMtimeMs }) => ({ remote, uri, uriKey, waiting: tasks, oldestMtimeMs }));
}

/**
 * The waiting count: the caller's (a node's last pass), else the freshest summary of a live node
 * when the queue is long (unless `exact`), else every waiting folder read from the store. A
 * node's own long count comes as its summary: its page, /status and /metrics then build per
 * remote totals and the longest-waiting URIs, never one record per waiting URI.
 */
export async function countWaiting(
  config: ReplicationConfig,
  store: TaskStore,
  options: StatusOptions,
  nodes: readonly NodeStatus[],
  storeNow: number,
): Promise<{ waiting: readonly WaitingUri[]; summary?: QueueSummary }> {
  if (options.summary !== undefined) return { waiting: listedIn(options.summary), summary: options.summary };
  if (options.waiting !== undefined) return { waiting: options.waiting };
  if (options.exact !== true) {
    const alive = new Set(nodes.filter((node) => node.state === 'alive').map((node) => node.nodeId));
    const maxAgeMs = QUEUE_SUMMARY_MAX_AGE_INTERVALS * config.distributionIntervalMs + QUEUE_SUMMARY_EVERY_MS;
    const summary = freshestSummary(await readQueueSummaries(config.storePath), alive, storeNow, maxAgeMs);
    if (summary !== undefined && summaryUris(summary) >= QUEUE_SUMMARY_MIN_URIS) {
      return { waiting: listedIn(summary), summary };
    }
  }
  return { waiting: waitingByUri(await listAllWaiting(store)) };
}

/**
 * Every waiting folder learned: listing again learns the next batch of folders not read yet. On a
 * busy store new folders keep coming; it stops once a listing leaves no fewer unread than the last.
 */
async function listAllWaiting(store: TaskStore): Promise<readonly WaitingFolder[]> {
  let unlearned = Number.POSITIVE_INFINITY;
  for (;;) {
    const listing = await store.listWaiting();
    if (listing.unlearned === 0 || listing.unlearned >= unlearned) return listing.folders;
    unlearned = listing.unlearned;
  }
}
