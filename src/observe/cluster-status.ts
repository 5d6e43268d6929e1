import { join } from 'node:path';
import type { ReplicationConfig } from '../config/types.js';
import type { Clock } from '../runtime/clock.js';
import type { TaskStore } from '../store/task-store.js';
import type { FailedTask, RunningLock } from '../store/store-types.js';
import type { WaitingUri } from '../schedule/waiting-uris.js';
import { uriKey as computeUriKey } from '../task/task.js';
import { redactUrl } from '../runtime/redact.js';
import { failedTaskView, newestFirst, type FailedTaskStatus } from './failed-view.js';
import type { QueueSummary } from './queue-summary.js';
import { readClusterHistory, type UriHistoryEntry } from './uri-history.js';
import { mergeTrends, readTrends, type ClusterTrend } from './trend.js';
import { countWaiting } from './waiting-count.js';
import { circuitsOf, nodeStatus, type CircuitStatus, type NodeStatus } from './node-records.js';
import { readBackoffs, type BackoffStatus } from './backoff-status.js';
import { readVerify, type VerifyStatus } from './verify-summary.js';

/** Version of the `status --json` shape; bump on any incompatible change. */
export const STATUS_FORMAT_VERSION = 1;

export interface UriStatus {
  uri: string;
  uriKey: string;
  waiting: number;
  oldestWaitingAgeMs: number | null;
  running: number;
  failed: number;
}

export interface RemoteStatus {
  name: string;
  configured: boolean;
  waiting: number;
  running: number;
  failed: number;
  oldestWaitingAgeMs: number | null;
  uris: UriStatus[];
}

export interface RunningClaim {
  lockName: string;
  uri: string | null;
  remote: string | null;
  tasks: number;
  ageMs: number;
  owner: { nodeId: string | null; pid: number | null; host: string | null } | null;
}

/** At most this many failed tasks are listed one by one unless asked for all; the counts cover all of them. */
export const FAILED_LISTED = 200;

export interface ClusterStatus {
  version: number;
  generatedAt: string;
  storePath: string;
  totals: { waiting: number; running: number; failed: number; corrupt: number };
  remotes: RemoteStatus[];
  running: RunningClaim[];
  /** The most recent failed tasks (at most 200 unless `failedLimit` says otherwise), newest first. */
  failed: FailedTaskStatus[];
  /** Store − local clock (ms) as measured by this status run; null when it could not (read-only store). */
  storeClockOffsetMs: number | null;
  nodes: NodeStatus[];
  /** Destination hosts a live node stopped scheduling after connection failures (open circuits). */
  circuits: CircuitStatus[];
  /** URIs whose last push failed, with the error and the wait for the next attempt, soonest first; `unread`: retry states past the read limit. */
  backingOff: { uris: BackoffStatus[]; unread: number };
  /** The last periodic verify (replication.verifyInterval), or null when none has run. */
  verify: VerifyStatus | null;
  /** Per URI key, the last events of every node (queued, claimed, pushed, failed, taken over), oldest first. */
  history: Record<string, UriHistoryEntry>;
  /** The last hour minute by minute, from every node's trend file: waiting tasks, pushes and failed pushes per remote. */
  trend: ClusterTrend;
  /**
   * The live node whose queue summary the waiting counts come from, and its age; null when they
   * were counted from the store (or from this node's own last pass). A summary lists only the
   * longest-waiting URIs one by one.
   */
  queueFrom: { nodeId: string; ageMs: number } | null;
}

export interface StatusOptions {
  /** Measured by the caller (a probe file in nodes/); null or absent: the local clock stands in for the store's. */
  readonly storeClockOffsetMs?: number | null;
  /** How many failed tasks to list one by one (default FAILED_LISTED); `status --all`: Infinity. */
  readonly failedLimit?: number;
  /** The waiting tasks as a node's last pass counted them; absent: a live node's summary, else waiting/ is read. */
  readonly waiting?: readonly WaitingUri[];
  /** A node's own summary of its last pass's count, for a long queue (it stands for `waiting`). */
  readonly summary?: QueueSummary;
  /** Count the waiting tasks from the store itself, never from a node's summary (`status --all`). */
  readonly exact?: boolean;
}

interface UriAccumulator extends UriStatus {
  remote: string;
  oldestMtimeMs: number | null;
}

/** The whole cluster's queue, read from the store alone: any machine that mounts it sees the same. */
export async function collectClusterStatus(config: ReplicationConfig, store: TaskStore, clock: Clock, options: StatusOptions = {}): Promise<ClusterStatus> {
  const now = clock.now();
  const storeClockOffsetMs = options.storeClockOffsetMs ?? null;
  const storeNow = now + (storeClockOffsetMs ?? 0);
  const [locks, failed, corrupt, nodeFiles] = await Promise.all([store.listRunning(), store.listFailed(), store.countCorrupt(), store.readNodeRecordFiles()]);
  // A lock folder this node may not list at all has nothing to show (DESIGN.md invariant 8).
  const running = locks.filter((lock) => lock.unreadable !== 'whole');
  const nodes = nodeFiles.flatMap((file) => nodeStatus(config, file.record, storeNow - file.mtimeMs)).sort((a, b) => a.nodeId.localeCompare(b.nodeId));
  const queue = await countWaiting(config, store, options, nodes, storeNow);
  const remotes = remoteStatuses(config, countByUri(queue.waiting, running, failed), now);
  // A summary names only the longest-waiting URIs; its totals count them all.
  for (const [name, totals] of Object.entries(queue.summary?.remotes ?? {})) {
    const remote = remoteNamed(remotes, name);
    remote.waiting = totals.tasks;
    remote.oldestWaitingAgeMs = totals.oldestMtimeMs === null ? null : Math.max(0, now - totals.oldestMtimeMs);
  }
  return {
    version: STATUS_FORMAT_VERSION,
    generatedAt: new Date(now).toISOString(),
    storePath: config.storePath,
    totals: {
      waiting: [...remotes.values()].reduce((sum, remote) => sum + remote.waiting, 0),
      running: running.reduce((sum, lock) => sum + lock.tasks.length, 0),
      failed: failed.length,
      corrupt,
    },
    remotes: [...remotes.values()],
    running: running.map((lock) => runningClaim(lock, now)),
    failed: failed
      .map((item) => failedTaskView(item, storeNow))
      .sort(newestFirst)
      .slice(0, options.failedLimit ?? FAILED_LISTED),
    storeClockOffsetMs,
    nodes,
    queueFrom: queue.summary === undefined ? null : { nodeId: queue.summary.nodeId, ageMs: Math.max(0, storeNow - queue.summary.writtenAt) },
    circuits: nodeFiles.flatMap((file) => circuitsOf(file.record, file.mtimeMs, storeNow)),
    backingOff: await readBackoffs(store, storeNow),
    verify: await readVerify(join(config.storePath, 'verify'), storeNow),
    history: await readClusterHistory(config.storePath),
    trend: mergeTrends(await readTrends(config.storePath), storeNow),
  };
}

/** Waiting, running and failed tasks counted per (remote, URI). */
function countByUri(waiting: readonly WaitingUri[], running: readonly RunningLock[], failed: readonly FailedTask[]): Map<string, UriAccumulator> {
  const byUri = new Map<string, UriAccumulator>();
  const entry = (remote: string, uri: string, uriKey?: string): UriAccumulator => {
    const key = `${remote}\u0000${uri}`;
    let found = byUri.get(key);
    if (found === undefined) {
      found = {
        remote,
        uri: redactUrl(uri),
        uriKey: uriKey ?? computeUriKey(uri),
        waiting: 0,
        oldestWaitingAgeMs: null,
        running: 0,
        failed: 0,
        oldestMtimeMs: null,
      };
      byUri.set(key, found);
    }
    return found;
  };
  for (const item of waiting) {
    const acc = entry(item.remote, item.uri, item.uriKey);
    acc.waiting += item.waiting;
    if (acc.oldestMtimeMs === null || item.oldestMtimeMs < acc.oldestMtimeMs) acc.oldestMtimeMs = item.oldestMtimeMs;
  }
  for (const lock of running) for (const claimed of lock.tasks) entry(claimed.task.remote, claimed.task.uri).running++;
  for (const item of failed) entry(item.task.remote, item.task.uri).failed++;
  return byUri;
}

/** Every configured remote, and any other a task names, with its URIs (sorted) and their sums. */
function remoteStatuses(config: ReplicationConfig, byUri: ReadonlyMap<string, UriAccumulator>, now: number): Map<string, RemoteStatus> {
  const remotes = new Map<string, RemoteStatus>();
  for (const remote of config.remotes) remotes.set(remote.name, { ...emptyRemote(remote.name), configured: true });
  for (const acc of byUri.values()) {
    const remote = remoteNamed(remotes, acc.remote);
    const age = acc.oldestMtimeMs === null ? null : Math.max(0, now - acc.oldestMtimeMs);
    remote.uris.push({ uri: acc.uri, uriKey: acc.uriKey, waiting: acc.waiting, oldestWaitingAgeMs: age, running: acc.running, failed: acc.failed });
    remote.waiting += acc.waiting;
    remote.running += acc.running;
    remote.failed += acc.failed;
    if (age !== null && (remote.oldestWaitingAgeMs === null || age > remote.oldestWaitingAgeMs)) remote.oldestWaitingAgeMs = age;
  }
  for (const remote of remotes.values()) remote.uris.sort((a, b) => a.uri.localeCompare(b.uri));
  return remotes;
}

/** The remote of that name; one the config no longer has is added as such. */
function remoteNamed(remotes: Map<string, RemoteStatus>, name: string): RemoteStatus {
  let remote = remotes.get(name);
  if (remote === undefined) remotes.set(name, (remote = emptyRemote(name)));
  return remote;
}

function emptyRemote(name: string): RemoteStatus {
  return { name, configured: false, waiting: 0, running: 0, failed: 0, oldestWaitingAgeMs: null, uris: [] };
}

function runningClaim(lock: RunningLock, now: number): RunningClaim {
  const first = lock.tasks[0]?.task;
  return {
    lockName: lock.lockName,
    uri: first === undefined ? null : redactUrl(first.uri),
    remote: first?.remote ?? null,
    tasks: lock.tasks.length,
    ageMs: Math.max(0, now - lock.mtimeMs),
    owner: ownerOf(lock.ownerRecord),
  };
}

function ownerOf(record: unknown): RunningClaim['owner'] {
  if (record === null || typeof record !== 'object') return null;
  const fields = record as Record<string, unknown>;
  return {
    nodeId: typeof fields.nodeId === 'string' ? fields.nodeId : null,
    pid: typeof fields.pid === 'number' ? fields.pid : null,
    host: typeof fields.host === 'string' ? fields.host : null,
  };
}
