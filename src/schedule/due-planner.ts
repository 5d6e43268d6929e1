import type { ReplicationConfig, RemoteConfig } from '../config/types.js';
import { hostOf } from '../push/destination-host.js';
import type { FairCandidate } from './fair-share.js';
import type { CircuitGate } from './host-circuit.js';
import type { JobResult } from './push-job.js';
import type { UriGroup } from './uri-groups.js';

/** What this node remembers about a URI between passes (the store remains the truth). */
export interface UriSchedule {
  /** uniform(0, randomDelay), drawn once per batch so the due time does not move every pass. */
  jitterMs: number;
  /** Persisted backoff seen in uri-state; not pushed before it, while its state file is listed. */
  notBefore: number;
  /** Not looked at again before this: lock refused, or updates that arrived during a push. */
  recheckAt: number;
  /** The destination host (for its circuit and pacing), once needed. */
  host?: string;
}

/** A URI due in this pass, with its due time and (while a circuit is open or a host paced) its host. */
export interface Due {
  readonly group: UriGroup;
  readonly at: number;
  readonly host: string;
}

export interface Bucket {
  readonly entries: Due[];
  readonly taken: Set<Due>;
}

/** A waiting URI as the last pass saw it, with its due time. */
export interface PassEntry {
  readonly group: UriGroup;
  readonly at: number;
}

/** What the due computation reads of the distributor: its schedules, its jobs, its circuits. */
export interface DueInputs {
  readonly schedules: Map<string, UriSchedule>;
  readonly inFlight: ReadonlyMap<string, unknown>;
  readonly random: { next(): number };
  /** The host's circuit gate; asked only while some circuit is open. */
  readonly gate: (host: string) => CircuitGate;
}

export function fairCandidate(group: UriGroup, dueAt: number): FairCandidate {
  return { lane: group.lane, remote: group.remote.name, remoteShares: group.remote.shares, dueAt };
}

/** mtimes are the store's clock; `offset` converts them to ours. */
export function dueAt(group: UriGroup, schedule: UriSchedule | undefined, config: ReplicationConfig, offset: number): number {
  const batchDue = group.oldestMtimeMs - offset + Math.max(group.remote.replicationDelayMs, config.distributionIntervalMs) + (schedule?.jitterMs ?? 0);
  return Math.max(batchDue, schedule?.notBefore ?? 0, schedule?.recheckAt ?? 0);
}

/**
 * The URIs due now (their host's circuit permitting), when the next one is, and every waiting
 * URI with its due time (for the status view). A URI seen for the first time gets its schedule
 * here, its jitter drawn. The pass's parts are functions of their own, and build their arrays
 * with loops: V8 recompiles a function that deoptimizes, and one pass-sized function cost 100 ms
 * of compile each time.
 */
export function dueOf(
  inputs: DueInputs,
  groups: ReadonlyMap<string, UriGroup>,
  config: ReplicationConfig,
  offset: number,
  now: number,
  circuitsOpen: boolean,
  paced: boolean,
): { due: Due[]; nextDueAt: number | undefined; lastPass: PassEntry[] } {
  const { schedules, inFlight } = inputs;
  const due: Due[] = [];
  let nextDueAt: number | undefined;
  const lastPass: PassEntry[] = [];
  for (const group of groups.values()) {
    let schedule = schedules.get(group.uriKey);
    if (schedule === undefined) {
      schedules.set(group.uriKey, (schedule = { jitterMs: inputs.random.next() * config.randomDelayMs, notBefore: 0, recheckAt: 0 }));
    }
    const at = dueAt(group, schedule, config, offset);
    lastPass.push({ group, at });
    if (inFlight.has(group.uriKey)) continue;
    if (at > now) {
      nextDueAt = nextDueAt === undefined ? at : Math.min(nextDueAt, at);
      continue;
    }
    // Parsing every URL on every pass would cost more than the pass itself: a URI's host is
    // looked up only while some circuit is open, and kept with its schedule.
    const host = circuitsOpen || paced ? (schedule.host ??= hostOf(group.uri)) : '';
    // A host whose circuit is open has nothing due; its URIs keep waiting, their retries unspent.
    if (circuitsOpen && inputs.gate(host) === 'blocked') continue;
    due.push({ group, at, host });
  }
  return { due, nextDueAt, lastPass };
}

/**
 * Due URIs by fair-share group (lane and remote): the fair share picks a group, and the group
 * offers its oldest startable URI. Only one candidate per group reaches the fair share, so a
 * pass over 10,000 due URIs costs a scan per start, not a sort. Also returns the candidates the
 * fair share is to observe (each group's first due URI, and every job in flight), and whether one
 * group alone is at work.
 */
export function bucketsOf(
  due: readonly Due[],
  jobs: Iterable<{ readonly group: UriGroup; readonly fair: FairCandidate }>,
): { buckets: Bucket[]; candidates: FairCandidate[]; soleGroupAtWork: boolean } {
  const buckets: Bucket[] = [];
  const bucketsByRemote = new Map<RemoteConfig, { live?: Bucket; bulk?: Bucket }>();
  for (const entry of due) {
    let lanes = bucketsByRemote.get(entry.group.remote);
    if (lanes === undefined) bucketsByRemote.set(entry.group.remote, (lanes = {}));
    let bucket = lanes[entry.group.lane];
    if (bucket === undefined) buckets.push((bucket = lanes[entry.group.lane] = { entries: [], taken: new Set() }));
    bucket.entries.push(entry);
  }
  const jobList = [...jobs];
  const candidates: FairCandidate[] = [];
  for (const bucket of buckets) candidates.push(fairCandidate(bucket.entries[0]!.group, bucket.entries[0]!.at));
  for (const job of jobList) candidates.push(job.fair);

  // With one group alone at work, fairness has nothing to choose: it may take ahead as many as
  // its threads, to keep the slots busy; with several, one each, so the waiters are a choice.
  const groupsAtWork = new Set<string>();
  for (const bucket of buckets) groupsAtWork.add(`${bucket.entries[0]!.group.lane}\u0000${bucket.entries[0]!.group.remote.name}`);
  for (const job of jobList) groupsAtWork.add(`${job.group.lane}\u0000${job.group.remote.name}`);
  return { buckets, candidates, soleGroupAtWork: groupsAtWork.size <= 1 };
}

/** The oldest entry of a bucket not taken yet that `startable` accepts (any, without it). */
export function oldestLeft(bucket: Bucket, startable?: (entry: Due) => boolean): Due | undefined {
  let oldest: Due | undefined;
  for (const entry of bucket.entries) {
    if (bucket.taken.has(entry) || (oldest !== undefined && entry.at >= oldest.at) || (startable !== undefined && !startable(entry))) continue;
    oldest = entry;
  }
  return oldest;
}

/** When a URI is looked at again after its job ended with `result`. */
export function rescheduleAfter(schedule: UriSchedule, result: JobResult, config: ReplicationConfig, now: number, rescheduleDelayMs: number, random: { next(): number }): void {
  switch (result.kind) {
    case 'backoff':
    case 'retry':
      schedule.notBefore = result.notBefore;
      break;
    case 'locked':
    case 'lock-lost':
    case 'stalled':
    case 'host-down':
      schedule.recheckAt = now + config.distributionIntervalMs;
      break;
    default:
      // Updates that arrived while this URI was pushed go in the next push, after rescheduleDelay.
      schedule.recheckAt = now + rescheduleDelayMs;
      schedule.notBefore = 0;
      schedule.jitterMs = random.next() * config.randomDelayMs;
  }
}
