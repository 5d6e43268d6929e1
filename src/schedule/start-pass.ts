import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { fairCandidate, oldestLeft, type Bucket, type Due } from './due-planner.js';
import type { FairCandidate, FairShare, Lane } from './fair-share.js';
import type { HostCircuits } from './host-circuit.js';
import type { HostPacing } from './host-pacing.js';
import { occupancy, type InFlight } from './in-flight.js';
import type { PushSlots } from './push-slots.js';
import type { StoreOutage } from './store-outage.js';
import type { UriGroup } from './uri-groups.js';

/** What starting the due URIs of a pass reads and calls of the distributor. */
export interface Starter {
  readonly fairShare: FairShare;
  readonly circuits: HostCircuits;
  readonly pacing: HostPacing;
  readonly storeOutage: StoreOutage;
  accepting(): boolean;
  hasRoom(remote: UriGroup['remote'], takeAhead: boolean, lane: Lane): boolean;
  nodeHasRoom(config: ReplicationConfig, takeAhead: boolean): boolean;
  /** Jobs of this node pushing to `host` whose pushes are not over. */
  activeJobsTo(host: string): number;
  /** `ahead`: started while no slot was free, to wait for one (taken ahead). */
  start(group: UriGroup, fair: FairCandidate, probe: boolean, ahead: boolean): void;
}

/** What one `startDue` knows while it starts jobs: due URIs left per remote, and room per kind. */
interface StartPass {
  readonly config: ReplicationConfig;
  readonly now: number;
  readonly circuitsOpen: boolean;
  readonly paced: boolean;
  readonly takeAheadAfterMs: number;
  readonly dueLeft: Map<string, number>;
  /** Per remote, lane and take-ahead, within one choice. */
  room: Map<string, boolean>;
}

/** Starts what the fair share picks among the due URIs, while there is room; returns how many. */
export function startDue(starter: Starter, buckets: readonly Bucket[], due: readonly Due[], config: ReplicationConfig, now: number, circuitsOpen: boolean, paced: boolean): number {
  let started = 0;
  const pass: StartPass = { config, now, circuitsOpen, paced, takeAheadAfterMs: config.distributionIntervalMs + config.randomDelayMs, dueLeft: new Map(), room: new Map() };
  for (const { group } of due) pass.dueLeft.set(group.remote.name, (pass.dueLeft.get(group.remote.name) ?? 0) + 1);
  while (starter.accepting() && starter.storeOutage.mayStart()) {
    pass.room = new Map();
    const heads: Array<{ entry: Due; fair: FairCandidate; bucket: { taken: Set<Due> } }> = [];
    for (const bucket of buckets) {
      const { group: first } = bucket.entries[0]!;
      // No room even for a URI taken ahead: nothing of this remote and lane can start now.
      if (!(starter.hasRoom(first.remote, true, first.lane) && starter.nodeHasRoom(config, true))) continue;
      const oldest = oldestLeft(bucket, (entry) => startable(starter, entry, pass));
      if (oldest !== undefined) heads.push({ entry: oldest, fair: fairCandidate(oldest.group, oldest.at), bucket });
    }
    const chosen = starter.fairShare.choose(heads, (head) => head.fair);
    if (chosen === undefined) break;
    const { entry } = chosen;
    chosen.bucket.taken.add(entry);
    pass.dueLeft.set(entry.group.remote.name, (pass.dueLeft.get(entry.group.remote.name) ?? 1) - 1);
    const probe = circuitsOpen && starter.circuits.gate(entry.host) === 'probe';
    if (paced) starter.pacing.started(entry.host);
    if (probe) starter.circuits.beginProbe(entry.host, entry.group.uriKey);
    const ahead = !(starter.hasRoom(entry.group.remote, false, entry.group.lane) && starter.nodeHasRoom(config, false));
    starter.start(entry.group, chosen.fair, probe, ahead);
    starter.storeOutage.started();
    started++;
  }
  return started;
}

function startable(starter: Starter, { group, at, host }: Due, pass: StartPass): boolean {
  const left = pass.dueLeft.get(group.remote.name) ?? 0;
  // Taken ahead (locked and claimed while the slots are busy) only when peers had a pass to
  // take it: a backlog, but not its tail (2 × threads URIs), which idle peers share out. A URI
  // not taken ahead still gets its turn: a freed slot is held for it when the fair share
  // prefers it to every waiter (see Distributor.slotHeldFor).
  const takeAhead = pass.now - at >= pass.takeAheadAfterMs && left > 2 * group.remote.threads;
  const roomKey = `${takeAhead}\u0000${group.lane}\u0000${group.remote.name}`;
  let hasRoom = pass.room.get(roomKey);
  if (hasRoom === undefined) pass.room.set(roomKey, (hasRoom = starter.hasRoom(group.remote, takeAhead, group.lane) && starter.nodeHasRoom(pass.config, takeAhead)));
  if (!hasRoom || (pass.circuitsOpen && starter.circuits.gate(host) === 'blocked')) return false;
  // An overloaded host: fewer pushes at once, and their starts spaced out.
  return !pass.paced || starter.pacing.allows(host, starter.activeJobsTo(host));
}

/** What holding a freed slot for a URI not started yet reads of the distributor. */
export interface SlotHolder {
  readonly inFlight: ReadonlyMap<string, InFlight>;
  readonly pushSlots: PushSlots;
  readonly fairShare: FairShare;
  /** The oldest due URI of each group that the last pass could not start. */
  readonly dueHeads: ReadonlyArray<{ fair: FairCandidate; remote: RemoteConfig }>;
  accepting(): boolean;
  config(): ReplicationConfig;
  threadsOf(remote: string): number;
}

/**
 * A freed slot is held (left free) instead of going to `best`, the fair share's choice among the
 * jobs waiting for one, when it prefers a URI that is not claimed yet — a group with nothing
 * taken ahead (the tail of a backlog, a live push behind a replicate-all) — or a job still
 * taking its lock. The pass that the freed slot triggers starts that URI, and it takes the slot.
 */
export function slotHeldFor(holder: SlotHolder, best: FairCandidate): boolean {
  const { inFlight, pushSlots } = holder;
  const starting: InFlight[] = [];
  for (const job of inFlight.values()) {
    if (job.phase.active && !job.phase.granted && !job.phase.ahead && !job.phase.waiting && (job.fair.lane !== best.lane || job.fair.remote !== best.remote)) starting.push(job);
  }
  // Jobs of other groups started for free slots and still taking their locks come before jobs
  // taken ahead (within one group, which URI goes first does not matter).
  if (starting.some((job) => pushSlots.busy(job.group.remote.name) < holder.threadsOf(job.group.remote.name))) return true;
  const config = holder.config();
  // Only for URIs the next pass can start: held for anything else, the slot would stay idle.
  const canStart = (remote: RemoteConfig): boolean =>
    holder.accepting() &&
    inFlight.size < 3 * config.maxPushes &&
    pushSlots.busy(remote.name) < holder.threadsOf(remote.name) &&
    occupancy(inFlight.values(), remote.name).jobs < 3 * remote.threads;
  // Within one group any URI may go first; only another group can have the better claim.
  const rivals = holder.dueHeads.filter((head) => (head.fair.lane !== best.lane || head.fair.remote !== best.remote) && canStart(head.remote)).map((head) => head.fair);
  if (rivals.length === 0) return false;
  // The waiter's own reservation is in its group's key; a rival would bring one too.
  const rivalSet = new Set(rivals);
  return holder.fairShare.choose([best, ...rivals], (candidate) => candidate, (candidate) => rivalSet.has(candidate)) !== best;
}
