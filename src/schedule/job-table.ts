import type { RemoteConfig } from '../config/types.js';
import type { FairCandidate, Lane } from './fair-share.js';
import type { UriGroup } from './uri-groups.js';

/**
 * Where a push job of this node is. `claiming` and `waiting` jobs started `ahead` (while no slot
 * was free, to wait for one) own no slot; the others own the slot they will push in.
 */
export type JobPhase =
  /** Taking its URI lock and claiming the tasks. */
  | { readonly kind: 'claiming'; readonly ahead: boolean }
  /** Asked for a push slot and not granted it (or gave up the wait). */
  | { readonly kind: 'waiting'; readonly ahead: boolean }
  /** Holds a push slot: its git pushes run. */
  | { readonly kind: 'pushing' }
  /** Its pushes are over and its slot is free: it finishes, resets or parks task files. */
  | { readonly kind: 'settling' };

/** A push job of this node, from its start until it ends. */
export interface Job {
  readonly group: UriGroup;
  readonly fair: FairCandidate;
  /** Started as the one probe of its host's open circuit. */
  readonly probe: boolean;
  /** The destination host, for its circuit and pacing. */
  readonly host: string;
  readonly controller: AbortController;
  readonly startedAt: number;
  phase: JobPhase;
  done: Promise<void>;
}

/** This node's push jobs by URI key. */
export type JobTable = ReadonlyMap<string, Job>;

/**
 * Per slot (a remote's `threads`, the node's `maxPushes`) at most one more job is active beside
 * the one pushing: taken ahead, it has its lock and tasks when the slot frees, so no pass stands
 * between two pushes. Any more would hold locks that idle peers could use.
 */
export const ACTIVE_PER_SLOT = 2;
/** And at most one more settling (finishing its task files): a slow store cannot pile up held locks. */
export const JOBS_PER_SLOT = 3;

interface Occupancy {
  readonly jobs: number;
  readonly active: number;
  readonly ownSlots: number;
  readonly aheadInLane: number;
}

/**
 * This node's jobs (of `remote`, or all): every job, those not settling (`active`), those owning
 * a slot (pushing, or started for a free one), and those taken ahead in `lane` and not pushing yet.
 */
export function occupancy(jobs: JobTable, remote?: string, lane?: Lane): Occupancy {
  const counts = { jobs: 0, active: 0, ownSlots: 0, aheadInLane: 0 };
  for (const { group, phase } of jobs.values()) {
    if (remote !== undefined && group.remote.name !== remote) continue;
    counts.jobs++;
    if (phase.kind === 'settling') continue;
    counts.active++;
    if (phase.kind === 'pushing' || !phase.ahead) counts.ownSlots++;
    else if (group.lane === lane) counts.aheadInLane++;
  }
  return counts;
}

/**
 * Room for one more job of `remote` in `lane`, on the remote and on the node; `takeAhead`: also
 * as a job that waits for a slot. A fair-share group has at most one job taken ahead while other
 * groups have work too (as many as its threads when it is alone), so every group with work has
 * its candidate among the waiters when a slot frees: a backlog cannot fill the waiting places,
 * and a live URI due while a replicate-all keeps every slot busy gets the next slot.
 */
export function hasRoom(jobs: JobTable, remote: RemoteConfig, lane: Lane, takeAhead: boolean, soleGroupAtWork: boolean, maxPushes: number): boolean {
  const own = occupancy(jobs, remote.name, lane);
  if (own.jobs >= JOBS_PER_SLOT * remote.threads) return false;
  const aheadLimit = soleGroupAtWork ? remote.threads : 1;
  if (!(own.ownSlots < remote.threads || (takeAhead && own.aheadInLane < aheadLimit && own.active < ACTIVE_PER_SLOT * remote.threads))) return false;
  const node = occupancy(jobs);
  if (node.jobs >= JOBS_PER_SLOT * maxPushes) return false;
  return node.ownSlots < maxPushes || (takeAhead && node.active < ACTIVE_PER_SLOT * maxPushes);
}

/** Jobs of this node pushing to `host`; `activeOnly`: only those not settling. */
export function jobsTo(jobs: JobTable, host: string, activeOnly: boolean): number {
  let count = 0;
  for (const job of jobs.values()) if (job.host === host && (job.phase.kind !== 'settling' || !activeOnly)) count++;
  return count;
}
