import type { Clock } from '../runtime/clock.js';

/**
 * Live work (hooks, enqueue, the ref watcher, verify --fix) and bulk work (replicate, replicate
 * on startup: full-sync tasks) are scheduled as two groups, so a replicate-all of every project
 * cannot hold a developer's fresh push behind it, and still always progresses.
 */
import type { Lane } from '../task/task.js';

export type { Lane };

export interface FairShareSettings {
  /** Usage halves over this long without pushes. */
  readonly halfLifeMs: number;
  readonly liveShares: number;
  readonly bulkShares: number;
}

/** What the fair share needs to know of one candidate (a due URI, or a push waiting for a slot). */
export interface FairCandidate {
  readonly lane: Lane;
  readonly remote: string;
  readonly remoteShares: number;
  /** When it became due; the oldest goes first within a group and breaks ties between groups. */
  readonly dueAt: number;
}

interface GroupUsage {
  /** Decayed push time in ms, as of `at`. */
  usageMs: number;
  at: number;
  /** Running pushes: the time each has been charged up to. */
  readonly running: Set<{ chargedUntil: number }>;
  shares: number;
  /** Jobs chosen (locked and claimed ahead) that wait for a slot: each counts as one expected push. */
  queued: number;
  /** Moving average of this group's push times, the expected cost of a queued one. */
  meanPushMs: number | undefined;
}

/** A chosen job's place in the fair share until its push starts (`begin`) or never does (`cancel`). */
export interface FairReservation {
  /** The push starts: charged from now until the returned stop. */
  begin(): () => void;
  cancel(): void;
}

export interface FairGroupView {
  readonly group: string;
  readonly shares: number;
  readonly usageMs: number;
  readonly running: number;
  readonly queued: number;
}

/** Expected cost of a queued push of a group that has not pushed yet. */
const DEFAULT_PUSH_MS = 1000;

/** Groups whose usage decayed below this and that run nothing are forgotten. */
const FORGET_BELOW_MS = 1;

/**
 * Group-level fair share (Kay–Lauder, as the CouchDB replicator's, but at group level): the lane
 * whose decayed push time ÷ shares is lowest goes first, then within it the remote whose is
 * lowest, then that remote's oldest due URI. Keeping usage per group, not per URI, is what keeps
 * shares right when one remote has 10,000 URIs waiting and another one (per-task priorities
 * forget too fast, and a big backlog then takes most slots).
 *
 * Running pushes are charged continuously, so a remote holding many slots sees its key rise while
 * it holds them. A group that becomes active (nothing due and nothing running before) is placed
 * at the lowest key of the groups already active, as Linux CFS places a new task at min_vruntime:
 * without it a newcomer whose usage decayed to 0 would take every slot until it caught up.
 * Usage never goes below 0, so a group in backoff does not build up credit.
 */
export class FairShare {
  private readonly groups = new Map<string, GroupUsage>();
  private active = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly settings: () => FairShareSettings,
  ) {}

  /**
   * A chosen candidate: it counts as one expected push of its groups at once, so that choosing
   * several in a row (a pass that fills many slots, jobs taken ahead) spreads them over the
   * groups instead of giving every one to the group that was lowest before the first.
   */
  reserve(candidate: Pick<FairCandidate, 'lane' | 'remote' | 'remoteShares'>): FairReservation {
    const groups = this.groupsOf(candidate).map(([id, shares]) => this.group(id, shares, this.clock.monotonic()));
    for (const group of groups) group.queued++;
    let state: 'queued' | 'running' | 'done' = 'queued';
    const unqueue = (): void => {
      for (const group of groups) group.queued--;
    };
    return {
      begin: () => {
        if (state !== 'queued') return () => undefined;
        state = 'running';
        unqueue();
        return this.run(groups);
      },
      cancel: () => {
        if (state !== 'queued') return;
        state = 'done';
        unqueue();
      },
    };
  }

  /** Charges a push's running time to its lane and to its remote within the lane until the returned stop. */
  begin(candidate: Pick<FairCandidate, 'lane' | 'remote' | 'remoteShares'>): () => void {
    return this.reserve(candidate).begin();
  }

  private run(groups: readonly GroupUsage[]): () => void {
    const startedAt = this.clock.monotonic();
    const runs = groups.map((group) => {
      this.decay(group, startedAt);
      const run = { chargedUntil: startedAt };
      group.running.add(run);
      return [group, run] as const;
    });
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      const at = this.clock.monotonic();
      for (const [group, run] of runs) {
        this.decay(group, at); // charges the run up to now
        group.running.delete(run);
        const took = at - startedAt;
        group.meanPushMs = group.meanPushMs === undefined ? took : group.meanPushMs + (took - group.meanPushMs) * 0.2;
      }
    };
  }

  /**
   * Tells which groups have work now (eligible candidates, or pushes in flight); a group that
   * just became active is placed at the current minimum. Call once per pass, before choosing.
   */
  observe(candidates: readonly FairCandidate[]): void {
    const now = this.clock.monotonic();
    const shares = new Map<string, number>();
    for (const candidate of candidates) for (const [id, groupShares] of this.groupsOf(candidate)) shares.set(id, groupShares);
    for (const [id, group] of this.groups) if (group.running.size > 0 || group.queued > 0) shares.set(id, group.shares);
    const newcomers = [...shares.keys()].filter((id) => !this.active.has(id));
    for (const id of newcomers) {
      const group = this.group(id, shares.get(id)!, now);
      // Lanes are compared with lanes, and a remote with the other remotes of its lane.
      const peers = [...shares.keys()].filter((other) => !newcomers.includes(other) && sameLevel(id, other));
      if (peers.length === 0) continue;
      const lowest = Math.min(...peers.map((other) => this.keyOf(this.group(other, shares.get(other)!, now), now)));
      group.usageMs = Math.max(group.usageMs, lowest * group.shares);
    }
    this.active = new Set(shares.keys());
    this.forgetIdle(now);
  }

  /**
   * The candidate to start next: lowest lane key (live wins a tie), lowest remote key, oldest due.
   * `unreserved` candidates are weighed as if already reserved (one more expected push of their
   * groups), to compare them fairly with candidates that hold a reservation.
   */
  choose<T>(candidates: readonly T[], describe: (candidate: T) => FairCandidate, unreserved?: (candidate: T) => boolean): T | undefined {
    if (candidates.length <= 1) return candidates[0];
    const now = this.clock.monotonic();
    const described = candidates.map((item) => ({ item, c: describe(item), extra: unreserved?.(item) === true ? 1 : 0 }));
    const laneExtra = (lane: Lane): number => (described.some((entry) => entry.c.lane === lane && entry.extra > 0) ? 1 : 0);
    const laneKey = (lane: Lane): number => this.keyOf(this.group(laneId(lane), this.laneShares(lane), now), now, laneExtra(lane));
    const lanes = [...new Set(described.map(({ c }) => c.lane))];
    lanes.sort((a, b) => laneKey(a) - laneKey(b) || (a === 'live' ? -1 : b === 'live' ? 1 : 0));
    const inLane = described.filter(({ c }) => c.lane === lanes[0]);
    const byRemote = new Map<string, { key: number; oldest: number; items: typeof inLane }>();
    for (const entry of inLane) {
      let remote = byRemote.get(entry.c.remote);
      if (remote === undefined) {
        const extra = inLane.some((other) => other.c.remote === entry.c.remote && other.extra > 0) ? 1 : 0;
        const key = this.keyOf(this.group(remoteId(entry.c.lane, entry.c.remote), entry.c.remoteShares, now), now, extra);
        byRemote.set(entry.c.remote, (remote = { key, oldest: entry.c.dueAt, items: [] }));
      }
      remote.oldest = Math.min(remote.oldest, entry.c.dueAt);
      remote.items.push(entry);
    }
    const best = [...byRemote.values()].sort((a, b) => a.key - b.key || a.oldest - b.oldest)[0]!;
    return best.items.reduce((oldest, entry) => (entry.c.dueAt < oldest.c.dueAt ? entry : oldest)).item;
  }

  /** Usage and running pushes per group, for `/status` and the metrics. */
  view(): FairGroupView[] {
    const now = this.clock.monotonic();
    return [...this.groups].map(([id, group]) => ({
      group: id,
      shares: group.shares,
      usageMs: Math.round(this.usageOf(group, now)),
      running: group.running.size,
      queued: group.queued,
    }));
  }

  private groupsOf(candidate: Pick<FairCandidate, 'lane' | 'remote' | 'remoteShares'>): Array<[string, number]> {
    return [
      [laneId(candidate.lane), this.laneShares(candidate.lane)],
      [remoteId(candidate.lane, candidate.remote), candidate.remoteShares],
    ];
  }

  private laneShares(lane: Lane): number {
    const settings = this.settings();
    return lane === 'live' ? settings.liveShares : settings.bulkShares;
  }

  private group(id: string, shares: number, now: number): GroupUsage {
    let group = this.groups.get(id);
    if (group === undefined) this.groups.set(id, (group = { usageMs: 0, at: now, running: new Set(), shares, queued: 0, meanPushMs: undefined }));
    group.shares = shares; // a reloaded config applies at once
    return group;
  }

  /** Usage (running pushes charged up to now) plus the expected cost of queued ones, ÷ shares. */
  private keyOf(group: GroupUsage, now: number, extraQueued = 0): number {
    const queued = group.queued + extraQueued;
    const queuedMs = queued === 0 ? 0 : queued * (group.meanPushMs ?? this.typicalPushMs());
    return (this.usageOf(group, now) + queuedMs) / group.shares;
  }

  private typicalPushMs(): number {
    const means = [...this.groups.values()].flatMap((group) => (group.meanPushMs === undefined ? [] : [group.meanPushMs]));
    return means.length === 0 ? DEFAULT_PUSH_MS : means.reduce((a, b) => a + b, 0) / means.length;
  }

  private usageOf(group: GroupUsage, now: number): number {
    this.decay(group, now);
    return group.usageMs;
  }

  /** Decays usage to `now` and charges the running pushes up to `now`. */
  private decay(group: GroupUsage, now: number): void {
    if (now <= group.at) return;
    group.usageMs *= 0.5 ** ((now - group.at) / this.settings().halfLifeMs);
    for (const run of group.running) {
      group.usageMs += now - run.chargedUntil;
      run.chargedUntil = now;
    }
    group.at = now;
  }

  private forgetIdle(now: number): void {
    for (const [id, group] of this.groups) {
      if (group.running.size === 0 && group.queued === 0 && !this.active.has(id) && this.usageOf(group, now) < FORGET_BELOW_MS) this.groups.delete(id);
    }
  }
}

function laneId(lane: Lane): string {
  return lane;
}

function remoteId(lane: Lane, remote: string): string {
  return `${lane}/${remote}`;
}

function sameLevel(a: string, b: string): boolean {
  const slashA = a.indexOf('/');
  const slashB = b.indexOf('/');
  if (slashA < 0 || slashB < 0) return slashA < 0 && slashB < 0;
  return a.slice(0, slashA) === b.slice(0, slashB);
}
