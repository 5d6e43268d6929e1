import type { ReplicationConfig } from '../config/types.js';
import type { FairCandidate, Lane } from './fair-share.js';
import type { PushSlot } from './push-slots.js';
import type { UriGroup } from './uri-groups.js';

/** A push job of this node, from its start until it ends. */
export interface InFlight {
  readonly group: UriGroup;
  readonly fair: FairCandidate;
  /** Started as the one probe of its host's open circuit. */
  readonly probe: boolean;
  /** The destination host, for its circuit and pacing. */
  readonly host: string;
  readonly controller: AbortController;
  readonly startedAt: number;
  readonly done: Promise<void>;
  /** Until its git pushes are over; then the job only finishes, resets or parks task files. */
  readonly phase: { active: boolean; granted: boolean; waiting: boolean; readonly ahead: boolean };
}

export interface Occupancy {
  readonly jobs: number;
  readonly active: number;
  readonly ownSlots: number;
  readonly aheadInLane: number;
}

/**
 * This node's jobs (of `remote`, or all): in flight, with pushes not over (`active`), owning a
 * slot (pushing, or started for a free one; jobs taken ahead own none), and taken ahead in `lane`.
 */
export function occupancy(inFlight: Iterable<InFlight>, remote?: string, lane?: Lane): Occupancy {
  const counts = { jobs: 0, active: 0, ownSlots: 0, aheadInLane: 0 };
  for (const job of inFlight) {
    if (remote !== undefined && job.group.remote.name !== remote) continue;
    counts.jobs++;
    if (!job.phase.active) continue;
    counts.active++;
    if (job.phase.granted || !job.phase.ahead) counts.ownSlots++;
    else if (job.group.lane === lane) counts.aheadInLane++;
  }
  return counts;
}

/**
 * A fair-share group (lane and remote) has at most one job taken ahead (waiting for a slot) while
 * other groups have work too (as many as its threads when it is alone): so
 * every group with work has its candidate among the waiters when a slot frees and the fair share
 * chooses between them there — a backlog cannot fill the waiting places with its own jobs, and a
 * live URI that becomes due while a replicate-all keeps every slot busy gets the next slot.
 */
export function hasRoom(inFlight: Iterable<InFlight>, soleGroupAtWork: boolean, remote: UriGroup['remote'], takeAhead: boolean, lane: Lane): boolean {
  const { jobs, active, ownSlots, aheadInLane } = occupancy(inFlight, remote.name, lane);
  if (jobs >= 3 * remote.threads) return false;
  const aheadLimit = soleGroupAtWork ? remote.threads : 1;
  return ownSlots < remote.threads || (takeAhead && aheadInLane < aheadLimit && active < 2 * remote.threads);
}

/** `maxPushes` bounds this node's jobs as `threads` bounds a remote's (see hasRoom). */
export function nodeHasRoom(inFlight: Iterable<InFlight>, config: ReplicationConfig, takeAhead: boolean): boolean {
  const { jobs, active, ownSlots } = occupancy(inFlight);
  if (jobs >= 3 * config.maxPushes) return false;
  return ownSlots < config.maxPushes || (takeAhead && active < 2 * config.maxPushes);
}

/** Jobs of this node pushing to `host`; `activeOnly`: only those whose pushes are not over. */
export function jobsTo(inFlight: Iterable<InFlight>, host: string, activeOnly: boolean): number {
  let jobs = 0;
  for (const job of inFlight) if (job.host === host && (job.phase.active || !activeOnly)) jobs++;
  return jobs;
}

export function threadsOf(config: ReplicationConfig, remote: string): number {
  return config.remotes.find((candidate) => candidate.name === remote)?.threads ?? 1;
}

/**
 * A job's slot as the distributor sees it: the remote's slot, with the job's phase kept up to
 * date. A class, not closures made per push (see RemoteSlot in push-slots.ts).
 */
export class JobSlot implements PushSlot {
  constructor(
    private readonly remoteSlot: PushSlot,
    private readonly phase: InFlight['phase'],
    private readonly onSlotFree: () => void,
  ) {}

  async acquire(signal: AbortSignal): Promise<boolean> {
    this.phase.waiting = true;
    const granted = await this.remoteSlot.acquire(signal);
    if (granted) this.phase.granted = true;
    return granted;
  }

  release(): void {
    this.remoteSlot.release();
    if (!this.phase.active) return;
    this.phase.active = false;
    const { onSlotFree } = this; // the distributor's callback, not a method of this slot
    onSlotFree();
  }
}
