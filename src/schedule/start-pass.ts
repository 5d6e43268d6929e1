import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import type { DueIndex } from './due-index.js';
import { fairCandidate, type Due, type DuePlan } from './due-planner.js';
import type { FairCandidate, FairShare } from './fair-share.js';
import type { HostCircuits } from './host-circuit.js';
import type { HostPacing } from './host-pacing.js';
import { ACTIVE_PER_SLOT, hasRoom, JOBS_PER_SLOT, jobsTo, occupancy, type JobTable } from './job-table.js';
import type { PushSlots } from './push-slots.js';
import type { StoreOutage } from './store-outage.js';
import type { UriGroup } from './uri-groups.js';

/** What starting the due URIs of a pass reads and calls of the distributor. */
export interface StartContext {
  readonly jobs: JobTable;
  /** The waiting URIs by due time; a started URI leaves it (see Distributor.start). */
  readonly index: DueIndex;
  readonly fairShare: FairShare;
  readonly circuits: HostCircuits;
  readonly pacing: HostPacing;
  readonly storeOutage: StoreOutage;
  readonly accepting: boolean;
  /** `ahead`: started while no slot was free, to wait for one (taken ahead). */
  start(group: UriGroup, fair: FairCandidate, probe: boolean, ahead: boolean): void;
}

/** The oldest due URI of a group that a pass could not start: a rival when a slot frees. */
export interface DueHead {
  readonly fair: FairCandidate;
  readonly remote: RemoteConfig;
}

export function threadsOf(config: ReplicationConfig, remote: string): number {
  return config.remotes.find((candidate) => candidate.name === remote)?.threads ?? 1;
}

/**
 * Starts what the fair share picks among the plan's due URIs while there is room; returns how
 * many started, and each group's oldest URI left.
 */
export function startDue(ctx: StartContext, plan: DuePlan, config: ReplicationConfig, now: number): { started: number; heads: DueHead[] } {
  const { jobs, index, fairShare, circuits, pacing, storeOutage } = ctx;
  const circuitsOpen = circuits.anyOpen();
  const paced = pacing.any();
  const dueLeft = new Map(plan.dueByRemote);
  const roomFor = (remote: RemoteConfig, lane: UriGroup['lane'], takeAhead: boolean): boolean =>
    hasRoom(jobs, remote, lane, takeAhead, plan.soleGroupAtWork, config.maxPushes);
  /** Per take-ahead, lane and remote, within one choice. */
  let room = new Map<string, boolean>();

  const startable = ({ group, at, host }: Due): boolean => {
    // Taken ahead (locked and claimed while the slots are busy) only when every peer had a pass
    // to take it, and not the tail of a backlog (what one node's active jobs could hold), which
    // idle peers share out. A URI not taken ahead still gets its turn: a freed slot is held for
    // it when the fair share prefers it to every waiter (see slotHeldFor).
    const takeAhead =
      now - at >= config.distributionIntervalMs + config.randomDelayMs && (dueLeft.get(group.remote.name) ?? 0) > ACTIVE_PER_SLOT * group.remote.threads;
    const key = `${takeAhead}\u0000${group.lane}\u0000${group.remote.name}`;
    let fits = room.get(key);
    if (fits === undefined) room.set(key, (fits = roomFor(group.remote, group.lane, takeAhead)));
    if (!fits || (circuitsOpen && circuits.gate(host) === 'blocked')) return false;
    // An overloaded host: fewer pushes at once, and their starts spaced out.
    return !paced || pacing.allows(host, jobsTo(jobs, host, true));
  };

  let started = 0;
  while (ctx.accepting && storeOutage.mayStart()) {
    room = new Map();
    const heads: Array<{ entry: Due; fair: FairCandidate }> = [];
    for (const dueGroup of plan.groups) {
      const oldest = index.oldest(dueGroup, plan.gate, startable);
      if (oldest !== undefined) heads.push({ entry: oldest, fair: fairCandidate(oldest) });
    }
    const chosen = fairShare.choose(heads, (head) => head.fair);
    if (chosen === undefined) break;
    const { group, host } = chosen.entry;
    dueLeft.set(group.remote.name, (dueLeft.get(group.remote.name) ?? 1) - 1);
    const probe = circuitsOpen && circuits.gate(host) === 'probe';
    if (paced) pacing.started(host);
    if (probe) circuits.beginProbe(host, group.uriKey);
    ctx.start(group, chosen.fair, probe, !roomFor(group.remote, group.lane, false));
    storeOutage.started();
    started++;
  }

  const heads: DueHead[] = [];
  for (const dueGroup of plan.groups) {
    const oldest = index.oldest(dueGroup, plan.gate);
    if (oldest !== undefined) heads.push({ fair: fairCandidate(oldest), remote: oldest.group.remote });
  }
  return { started, heads };
}

/** What holding a freed slot for a URI not started yet reads of the distributor. */
export interface HoldContext {
  readonly jobs: JobTable;
  readonly pushSlots: PushSlots;
  readonly fairShare: FairShare;
  /** The last pass's heads (see startDue). */
  readonly heads: readonly DueHead[];
  readonly accepting: boolean;
  readonly config: ReplicationConfig;
}

/**
 * A freed slot is held (left free) instead of going to `best`, the fair share's choice among the
 * jobs waiting for one, when it prefers a URI that is not claimed yet — a group with nothing
 * taken ahead (the tail of a backlog, a live push behind a replicate-all) — or a job still
 * taking its lock. The pass that the freed slot triggers starts that URI, and it takes the slot.
 */
export function slotHeldFor(ctx: HoldContext, best: FairCandidate): boolean {
  const { jobs, pushSlots, config } = ctx;
  const otherGroup = (fair: FairCandidate): boolean => fair.lane !== best.lane || fair.remote !== best.remote;
  const slotFree = (remote: string): boolean => pushSlots.busy(remote) < threadsOf(config, remote);
  // Jobs of other groups started for free slots and still taking their locks come before jobs
  // taken ahead (within one group, which URI goes first does not matter).
  for (const { phase, fair, group } of jobs.values()) {
    if (phase.kind === 'claiming' && !phase.ahead && otherGroup(fair) && slotFree(group.remote.name)) return true;
  }
  // Only for URIs the next pass can start: held for anything else, the slot would stay idle.
  const canStart = (remote: RemoteConfig): boolean =>
    ctx.accepting &&
    jobs.size < JOBS_PER_SLOT * config.maxPushes &&
    slotFree(remote.name) &&
    occupancy(jobs, remote.name).jobs < JOBS_PER_SLOT * remote.threads;
  const rivals = ctx.heads.filter((head) => otherGroup(head.fair) && canStart(head.remote)).map((head) => head.fair);
  if (rivals.length === 0) return false;
  // The waiter's own reservation is in its group's key; a rival would bring one too.
  const rivalSet = new Set(rivals);
  return (
    ctx.fairShare.choose(
      [best, ...rivals],
      (candidate) => candidate,
      (candidate) => rivalSet.has(candidate),
    ) !== best
  );
}
