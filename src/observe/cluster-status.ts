import type { ReplicationConfig } from '../config/types.js';
import type { Clock } from '../runtime/clock.js';
import type { TaskStore } from '../store/task-store.js';
import { uriKey as computeUriKey } from '../task/task.js';
import { redactUrl } from './redact.js';

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

export interface NodeStatus {
  nodeId: string;
  record: Record<string, unknown>;
}

export interface ClusterStatus {
  version: number;
  generatedAt: string;
  storePath: string;
  totals: { waiting: number; running: number; failed: number; corrupt: number };
  remotes: RemoteStatus[];
  running: RunningClaim[];
  nodes: NodeStatus[];
}

interface UriAccumulator extends UriStatus {
  remote: string;
  oldestMtimeMs: number | null;
}

/** The whole cluster's queue, read from the store alone: any machine that mounts it sees the same. */
export async function collectClusterStatus(config: ReplicationConfig, store: TaskStore, clock: Clock): Promise<ClusterStatus> {
  const now = clock.now();
  const [waiting, running, failed, corrupt, nodeRecords] = await Promise.all([
    store.listWaiting(),
    store.listRunning(),
    store.listFailed(),
    store.countCorrupt(),
    store.readNodeRecords(),
  ]);
  const byUri = new Map<string, UriAccumulator>();
  const entry = (remote: string, uri: string): UriAccumulator => {
    const key = `${remote}\u0000${uri}`;
    let found = byUri.get(key);
    if (found === undefined) {
      found = { remote, uri: redactUrl(uri), uriKey: computeUriKey(uri), waiting: 0, oldestWaitingAgeMs: null, running: 0, failed: 0, oldestMtimeMs: null };
      byUri.set(key, found);
    }
    return found;
  };
  for (const item of waiting) {
    const acc = entry(item.task.remote, item.task.uri);
    acc.waiting++;
    if (acc.oldestMtimeMs === null || item.mtimeMs < acc.oldestMtimeMs) acc.oldestMtimeMs = item.mtimeMs;
  }
  const claims: RunningClaim[] = [];
  for (const lock of running) {
    const first = lock.tasks[0]?.task;
    for (const claimed of lock.tasks) entry(claimed.task.remote, claimed.task.uri).running++;
    claims.push({
      lockName: lock.lockName,
      uri: first === undefined ? null : redactUrl(first.uri),
      remote: first?.remote ?? null,
      tasks: lock.tasks.length,
      ageMs: Math.max(0, now - lock.mtimeMs),
      owner: ownerOf(lock.ownerRecord),
    });
  }
  for (const item of failed) entry(item.task.remote, item.task.uri).failed++;

  const remotes = new Map<string, RemoteStatus>();
  for (const remote of config.remotes) {
    remotes.set(remote.name, { name: remote.name, configured: true, waiting: 0, running: 0, failed: 0, oldestWaitingAgeMs: null, uris: [] });
  }
  for (const acc of byUri.values()) {
    let remote = remotes.get(acc.remote);
    if (remote === undefined) {
      remote = { name: acc.remote, configured: false, waiting: 0, running: 0, failed: 0, oldestWaitingAgeMs: null, uris: [] };
      remotes.set(acc.remote, remote);
    }
    const age = acc.oldestMtimeMs === null ? null : Math.max(0, now - acc.oldestMtimeMs);
    remote.uris.push({ uri: acc.uri, uriKey: acc.uriKey, waiting: acc.waiting, oldestWaitingAgeMs: age, running: acc.running, failed: acc.failed });
    remote.waiting += acc.waiting;
    remote.running += acc.running;
    remote.failed += acc.failed;
    if (age !== null && (remote.oldestWaitingAgeMs === null || age > remote.oldestWaitingAgeMs)) remote.oldestWaitingAgeMs = age;
  }
  for (const remote of remotes.values()) remote.uris.sort((a, b) => a.uri.localeCompare(b.uri));

  return {
    version: STATUS_FORMAT_VERSION,
    generatedAt: new Date(now).toISOString(),
    storePath: config.storePath,
    totals: {
      waiting: waiting.length,
      running: running.reduce((sum, lock) => sum + lock.tasks.length, 0),
      failed: failed.length,
      corrupt,
    },
    remotes: [...remotes.values()],
    running: claims,
    nodes: nodeRecords.flatMap((record) => {
      if (record === null || typeof record !== 'object') return [];
      const nodeId = (record as Record<string, unknown>).nodeId;
      return typeof nodeId === 'string' ? [{ nodeId, record: record as Record<string, unknown> }] : [];
    }),
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
