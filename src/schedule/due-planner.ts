import type { ReplicationConfig } from '../config/types.js';
import { hostOf } from '../push/destination-host.js';
import type { FairCandidate } from './fair-share.js';
import type { CircuitGate } from './host-circuit.js';
import type { DueGroup, DueIndex } from './due-index.js';
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

/** What a pass plans: the fair-share groups with URIs that may start, and what the fair share weighs. */
export interface DuePlan {
  /** The groups with a due URI on a host whose circuit lets it start. */
  readonly groups: readonly DueGroup[];
  /** How many URIs of each remote are due (hosts with an open circuit left out). */
  readonly dueByRemote: ReadonlyMap<string, number>;
  /** Earliest time a waiting URI not due yet may become due. */
  readonly nextDueAt: number | undefined;
  /** Each group's oldest due URI and every job: what the fair share is to observe. */
  readonly candidates: readonly FairCandidate[];
  /** One fair-share group alone has work. */
  readonly soleGroupAtWork: boolean;
  /** The gate of a host's open circuit; undefined while no circuit is open. */
  readonly gate: ((host: string) => CircuitGate) | undefined;
}

export function fairCandidate({ group, at }: { group: UriGroup; at: number }): FairCandidate {
  return { lane: group.lane, remote: group.remote.name, remoteShares: group.remote.shares, dueAt: at };
}

/** When a URI's batch is due: oldest mtime + max(replicationDelay, distributionInterval) + jitter (store clock). */
export function batchDue(group: UriGroup, schedule: UriSchedule | undefined, config: ReplicationConfig): number {
  return group.oldestMtimeMs + Math.max(group.remote.replicationDelayMs, config.distributionIntervalMs) + (schedule?.jitterMs ?? 0);
}

/**
 * How long a change to waiting/ that this node did not make may go unread: a task another writer
 * publishes is due no sooner than max(replicationDelay, distributionInterval) after it is written,
 * and the pass that finds it comes up to one interval after the listing (DESIGN.md "Waiting
 * folders", Learn). 0 when some remote pushes at once, or none is configured.
 */
export function unreadChangesMayWaitMs(config: ReplicationConfig): number {
  const soonest = soonestBatchMs(config);
  return Number.isFinite(soonest) ? Math.max(0, soonest - config.distributionIntervalMs) : 0;
}

/** The shortest batching window of any remote, max(replicationDelay, distributionInterval); infinite with none. */
export function soonestBatchMs(config: ReplicationConfig): number {
  return Math.min(...config.remotes.map((remote) => Math.max(remote.replicationDelayMs, config.distributionIntervalMs)));
}

/** Not due before this, whatever its batch says: its backoff, its recheck time (our clock). */
export function floorOf(schedule: UriSchedule | undefined): number {
  return Math.max(schedule?.notBefore ?? 0, schedule?.recheckAt ?? 0);
}

/** A URI's due time on our clock: its batch's, never before its floor. */
export function dueAt(group: UriGroup, schedule: UriSchedule | undefined, config: ReplicationConfig, offsetMs: number): number {
  return Math.max(batchDue(group, schedule, config) - offsetMs, floorOf(schedule));
}

/** The key of a fair-share group: lane and remote. */
export function fairGroupKey(group: Pick<UriGroup, 'lane' | 'remote'>): string {
  return `${group.lane}\u0000${group.remote.name}`;
}

/**
 * The plan of a pass: moves the URIs whose time came into their due buckets (the index is this
 * node's memory of the waiting URIs), then reads each group's oldest due URI and the jobs. Costs
 * the groups and hosts with due work and the URIs that became due, not the backlog.
 */
export function planDue(index: DueIndex, jobs: JobTable, now: number, offsetMs: number, gate: DuePlan['gate']): DuePlan {
  index.advance(now, offsetMs);
  const groups: DueGroup[] = [];
  const candidates: FairCandidate[] = [];
  const atWork = new Set<string>();
  for (const group of index.groups()) {
    const oldest = index.oldest(group, gate);
    if (oldest === undefined) continue;
    groups.push(group);
    candidates.push(fairCandidate(oldest));
    atWork.add(group.key);
  }
  for (const job of jobs.values()) {
    candidates.push(job.fair);
    atWork.add(fairGroupKey(job.group));
  }
  return { groups, dueByRemote: index.dueByRemote(gate), nextDueAt: index.nextDueAt(offsetMs), candidates, soleGroupAtWork: atWork.size <= 1, gate };
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
