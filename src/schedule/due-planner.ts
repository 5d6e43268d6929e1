import type { ReplicationConfig } from '../config/types.js';
import { hostOf } from '../push/destination-host.js';
import type { FairCandidate } from './fair-share.js';
import type { CircuitGate } from './host-circuit.js';
import type { JobTable } from './job-table.js';
import type { JobResult } from './job-result.js';
import type { UriGroup } from './uri-groups.js';

/** What this node remembers about a URI between passes (the store remains the truth). */
export interface UriSchedule {
  /** uniform(0, randomDelay), drawn once per batch so the due time does not move every pass. */
  readonly jitterMs: number;
  /** Persisted backoff seen in uri-state; not pushed before it, while its state file is listed. */
  readonly notBefore: number;
  /** Not looked at again before this: lock refused, or updates that arrived during a push. */
  readonly recheckAt: number;
  /** The destination host (for its circuit and pacing), parsed once per URI. */
  readonly host?: string;
}

/** A waiting URI with its due time (and, when due, its host). */
export interface Due {
  readonly group: UriGroup;
  readonly at: number;
  readonly host: string;
}

export interface PlanInput {
  /** The waiting tasks by URI. */
  readonly groups: ReadonlyMap<string, UriGroup>;
  readonly schedules: ReadonlyMap<string, UriSchedule>;
  /** This node's jobs: their URIs are not due again, and the fair share weighs them. */
  readonly jobs: JobTable;
  readonly config: ReplicationConfig;
  /** Store clock minus ours: mtimes are the store's clock. */
  readonly offsetMs: number;
  readonly now: number;
  /** The gate of a host's open circuit; undefined while no circuit is open. */
  readonly gate: ((host: string) => CircuitGate) | undefined;
}

export interface DuePlan {
  /** Every waiting URI with its due time, for the status view. */
  readonly waiting: readonly Due[];
  /** The URIs due now by fair-share group (lane and remote), in listing order (see oldestLeft). */
  readonly buckets: ReadonlyArray<readonly Due[]>;
  /** How many URIs of each remote are due. */
  readonly dueByRemote: ReadonlyMap<string, number>;
  /** Earliest time a waiting URI not due yet becomes due. */
  readonly nextDueAt: number | undefined;
  /** Each group's first due URI and every job: the groups the fair share is to observe. */
  readonly candidates: readonly FairCandidate[];
  /** One fair-share group alone has work. */
  readonly soleGroupAtWork: boolean;
}

export function fairCandidate({ group, at }: { group: UriGroup; at: number }): FairCandidate {
  return { lane: group.lane, remote: group.remote.name, remoteShares: group.remote.shares, dueAt: at };
}

/** oldest mtime + max(replicationDelay, distributionInterval) + jitter, never before notBefore or recheckAt. */
export function dueAt(group: UriGroup, schedule: UriSchedule | undefined, config: ReplicationConfig, offsetMs: number): number {
  const batchDue = group.oldestMtimeMs - offsetMs + Math.max(group.remote.replicationDelayMs, config.distributionIntervalMs) + (schedule?.jitterMs ?? 0);
  return Math.max(batchDue, schedule?.notBefore ?? 0, schedule?.recheckAt ?? 0);
}

/**
 * The due URIs of a pass: those whose due time has come, with no job of this node, and whose
 * host's circuit lets them start, grouped by lane and remote. The fair share picks a group and
 * the group offers its oldest startable URI, so a pass over 10,000 due URIs costs a scan per
 * start, not a sort. A pure function of its input.
 */
export function planDue(input: PlanInput): DuePlan {
  const { groups, schedules, jobs, config, offsetMs, now, gate } = input;
  const waiting: Due[] = [];
  const byGroup = new Map<string, Due[]>();
  const dueByRemote = new Map<string, number>();
  let nextDueAt: number | undefined;
  for (const group of groups.values()) {
    const schedule = schedules.get(group.uriKey);
    const at = dueAt(group, schedule, config, offsetMs);
    const host = schedule?.host ?? hostOf(group.uri);
    const entry = { group, at, host };
    waiting.push(entry);
    if (jobs.has(group.uriKey)) continue;
    if (at > now) {
      nextDueAt = Math.min(nextDueAt ?? at, at);
      continue;
    }
    // A host whose circuit is open has nothing due; its URIs keep waiting, their retries unspent.
    if (gate?.(host) === 'blocked') continue;
    const key = groupKey(group);
    const bucket = byGroup.get(key);
    if (bucket === undefined) byGroup.set(key, [entry]);
    else bucket.push(entry);
    dueByRemote.set(group.remote.name, (dueByRemote.get(group.remote.name) ?? 0) + 1);
  }
  const buckets = [...byGroup.values()];
  const candidates = buckets.map((bucket) => fairCandidate(bucket[0]!));
  const atWork = new Set(byGroup.keys());
  for (const job of jobs.values()) {
    candidates.push(job.fair);
    atWork.add(groupKey(job.group));
  }
  return { waiting, buckets, dueByRemote, nextDueAt, candidates, soleGroupAtWork: atWork.size <= 1 };
}

function groupKey(group: UriGroup): string {
  return `${group.lane}\u0000${group.remote.name}`;
}

/** The oldest entry of a bucket not taken yet that `startable` accepts (any, without it). */
export function oldestLeft(bucket: readonly Due[], taken: ReadonlySet<Due>, startable?: (entry: Due) => boolean): Due | undefined {
  let oldest: Due | undefined;
  for (const entry of bucket) {
    if (taken.has(entry) || (oldest !== undefined && entry.at >= oldest.at) || (startable !== undefined && !startable(entry))) continue;
    oldest = entry;
  }
  return oldest;
}

/** A URI seen for the first time: its jitter drawn for the batch, its host parsed. */
export function newSchedule(uri: string, config: ReplicationConfig, random: { next(): number }): UriSchedule {
  return { jitterMs: random.next() * config.randomDelayMs, notBefore: 0, recheckAt: 0, host: hostOf(uri) };
}

/** When a URI is looked at again after its job ended with `result`. */
export function scheduleAfter(
  schedule: UriSchedule,
  result: JobResult,
  config: ReplicationConfig,
  now: number,
  rescheduleDelayMs: number,
  random: { next(): number },
): UriSchedule {
  switch (result.kind) {
    case 'backoff':
    case 'retry':
      return { ...schedule, notBefore: result.notBefore };
    case 'locked':
    case 'lock-lost':
    case 'stalled':
    case 'host-down':
      return { ...schedule, recheckAt: now + config.distributionIntervalMs };
    default:
      // Updates that arrived while this URI was pushed go in the next push, after rescheduleDelay.
      return { ...schedule, recheckAt: now + rescheduleDelayMs, notBefore: 0, jitterMs: random.next() * config.randomDelayMs };
  }
}
