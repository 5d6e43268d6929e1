import type { OpenCircuit } from '../cluster/node-heartbeat.js';
import type { NodeSchedule } from '../observe/http-server.js';
import { redactUrl } from '../observe/redact.js';
import type { HostHealth, SchedulerDeps } from './ports.js';
import { movedToFailed, runPushJob, type JobResult } from './push-job.js';
import { PushSlots, type PushSlot } from './push-slots.js';
import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { FairShare, type FairCandidate, type Lane } from './fair-share.js';
import { HostCircuits } from './host-circuit.js';
import { HostPacing } from './host-pacing.js';
import { hostOf } from '../push/destination-host.js';
import { groupWaiting, withoutTasks, type Grouping, type ResolutionCache, type UntrustedTask, type UriGroup } from './uri-groups.js';
import { parkUntrusted } from './park-untrusted.js';
import { StoreOutage, storeFailureCode } from './store-outage.js';

/** What this node remembers about a URI between passes (the store remains the truth). */
interface UriSchedule {
  /** uniform(0, randomDelay), drawn once per batch so the due time does not move every pass. */
  jitterMs: number;
  /** Persisted backoff seen in uri-state; not pushed before it, while its state file is listed. */
  notBefore: number;
  /** Not looked at again before this: lock refused, or updates that arrived during a push. */
  recheckAt: number;
  /** The destination host (for its circuit and pacing), once needed. */
  host?: string;
}

interface InFlight {
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

/** A URI due in this pass, with its due time and (while a circuit is open or a host paced) its host. */
interface Due {
  readonly group: UriGroup;
  readonly at: number;
  readonly host: string;
}

interface Bucket {
  readonly entries: Due[];
  readonly taken: Set<Due>;
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

/** The live lane's weight; `replication.bulkShares` is set against it. */
export const LIVE_SHARES = 100;

export interface TickReport {
  /** URIs with work this node may take (waiting, or being pushed by this node); a reused listing may miss some. */
  readonly pendingUris: number;
  readonly started: number;
  /** Earliest local time at which a waiting URI becomes due; undefined when none waits. */
  readonly nextDueAt: number | undefined;
}

/**
 * The distributor: every pass lists `waiting/`, groups tasks by URI, and starts a push for each
 * URI whose due time has come — oldest task mtime + max(replicationDelay, distributionInterval)
 * + jitter, never before the URI's persisted backoff — within each remote's `threads` and the
 * node's `maxPushes`. When more URIs are due than there are slots, the fair share chooses (lane,
 * then remote, then the oldest due URI; see FairShare), both here and when a slot frees. URIs of
 * a host whose circuit is open are not due at all, except its one probe.
 *
 * `threads` bounds the git pushes a remote runs at once, not the store work around them. A job
 * whose pushes are over gives its slot away while it finishes its task files. And a URI due for
 * longer than one pass of every node (distributionInterval + randomDelay) — a backlog no other
 * node took — is locked and claimed ahead, while all slots are busy, so its push starts the moment
 * one frees. A URI only just due is never taken ahead: an idle peer may push it at once; nor is
 * the tail of a backlog (no more than 2 × threads due URIs left), which peers share out. Per
 * remote at most 2 × threads jobs are active and 3 × threads exist, so a slow store cannot pile
 * up held locks.
 */
export class Distributor {
  private readonly schedules = new Map<string, UriSchedule>();
  private readonly inFlight = new Map<string, InFlight>();
  private resolutions: ResolutionCache = new WeakMap();
  private resolutionsFor: ReplicationConfig | undefined;
  /** The last grouping: of which listing, and how many of the names forgotten since it it lacks. */
  private grouped: { grouping: Grouping; listing: number; applied: number } | undefined;
  private readonly fairShare: FairShare;
  private readonly circuits: HostCircuits;
  private readonly pacing: HostPacing;
  private readonly pushSlots: PushSlots;
  private readonly jobDeps: SchedulerDeps;
  /** Store failures of this node (jobs, passes, heartbeats): job starts back off while it fails. */
  readonly storeOutage: StoreOutage;
  private soleGroupAtWork = true;
  /** The oldest due URI of each group that the last pass could not start. */
  private dueHeads: Array<{ fair: FairCandidate; remote: RemoteConfig }> = [];
  /** The last pass's view of each waiting URI, for `/status` and the page. */
  private lastPass: Array<{ group: UriGroup; at: number }> = [];
  private accepting = true;
  private failedToFailedDir = 0;
  /** URIs whose refused task files are being moved to failed/ right now. */
  private readonly parking = new Map<string, Promise<void>>();

  /**
   * `onSlotFree` runs when a job ends and when a job's pushes are over (its slot is free for the
   * next URI while it finishes): the daemon runs a pass then.
   */
  constructor(
    private readonly deps: SchedulerDeps,
    private readonly onSlotFree: () => void = () => undefined,
  ) {
    this.fairShare = new FairShare(deps.clock, () => {
      const config = deps.config();
      return { halfLifeMs: config.usageHalfLifeMs, liveShares: LIVE_SHARES, bulkShares: config.bulkShares };
    });
    this.circuits = new HostCircuits(deps.clock, deps.random);
    this.pacing = new HostPacing(deps.clock);
    this.storeOutage = new StoreOutage(deps.clock, () => deps.config().distributionIntervalMs);
    this.pushSlots = new PushSlots({ nodeLimit: () => deps.config().maxPushes, fairShare: this.fairShare, hold: (best) => this.slotHeldFor(best) });
    const { circuits, pacing } = this;
    const hosts: HostHealth = {
      reached: (uri) => {
        const host = hostOf(uri);
        circuits.reached(host);
        pacing.succeeded(host);
      },
      connectionFailed: (uri, uriKey, baseMs, message) => circuits.connectionFailed(hostOf(uri), uriKey, baseMs, message),
      mayPush: (uri, uriKey) => !circuits.anyOpen() || circuits.mayPush(hostOf(uri), uriKey),
      overloaded: (uri, retryAfterMs) => {
        const host = hostOf(uri);
        // Every job of the host still in flight counts, pushes just over included: the width the host refused.
        pacing.overloaded(host, this.jobsTo(host, false), retryAfterMs);
        return true;
      },
    };
    this.jobDeps = { ...deps, hosts };
  }

  /** Push jobs, and jobs parking refused task files. */
  get runningCount(): number {
    return this.inFlight.size + this.parking.size;
  }

  /** How many task files this node put in failed/ since it started (whole tasks and parked rejected refs). */
  get failedCount(): number {
    return this.failedToFailedDir;
  }

  /** Hosts whose circuit is open on this node. */
  openCircuits(): OpenCircuit[] {
    return this.circuits.view().flatMap((view) => (view.state === 'closed' ? [] : [{ host: view.host, state: view.state, trips: view.trips, nextProbeAt: view.nextProbeAt, lastError: view.lastError }]));
  }

  runningUris(): string[] {
    return [...this.inFlight.values()].map((job) => redactUrl(job.group.uri));
  }

  /** A URI whose tasks were just recovered from a dead holder: push it on the next pass. */
  expedite(uriKey: string): void {
    const schedule = this.schedules.get(uriKey);
    const now = this.deps.clock.now();
    // The recovered tasks keep their old mtimes, so their batch is already due; clear any
    // lock-refused wait and jitter so this node (the one that took over) goes first.
    if (schedule === undefined) this.schedules.set(uriKey, { jitterMs: 0, notBefore: 0, recheckAt: 0 });
    else {
      schedule.jitterMs = 0;
      schedule.recheckAt = Math.min(schedule.recheckAt, now);
    }
  }

  /** Stop starting pushes; running ones go on (graceful shutdown, first phase). */
  stopAccepting(): void {
    this.accepting = false;
  }

  abortAll(): void {
    for (const job of this.inFlight.values()) job.controller.abort();
  }

  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0 || this.parking.size > 0) await Promise.all([...[...this.inFlight.values()].map((job) => job.done), ...this.parking.values()]);
  }

  /**
   * One pass. `reuseListing`: work from the last listing (minus this node's claims since) instead
   * of reading `waiting/` again — for the passes a freed push slot triggers, which in a backlog
   * come many times per distributionInterval; the periodic pass lists afresh.
   */
  async tick(options: { reuseListing?: boolean } = {}): Promise<TickReport> {
    const { deps } = this;
    const config = deps.config();
    if (this.resolutionsFor !== config) {
      this.resolutions = new WeakMap();
      this.resolutionsFor = config;
      this.grouped = undefined;
    }
    const { groups, untrusted } = await this.grouping(config, options.reuseListing === true);
    // A reused listing lacks what this node put back in waiting/ since (a retry keeps its backoff
    // here): only a fresh one tells which URIs have nothing left.
    if (options.reuseListing !== true) {
      for (const key of this.schedules.keys()) if (!groups.has(key) && !this.inFlight.has(key)) this.schedules.delete(key);
      await this.forgetClearedBackoffs(deps.clock.now());
    }

    const offset = deps.storeClockOffsetMs?.() ?? 0;
    const now = deps.clock.now();
    const circuitsOpen = this.circuits.anyOpen();
    const paced = this.pacing.any();
    const { due, nextDueAt } = this.dueOf(groups, config, offset, now, circuitsOpen, paced);
    const buckets = this.bucketsOf(due);
    const started = this.startDue(buckets, due, config, now, circuitsOpen, paced);
    // What could not start now, one per group, for the fair share's choice when a slot frees.
    this.dueHeads = [];
    for (const bucket of buckets) {
      const oldest = this.oldestLeft(bucket);
      if (oldest !== undefined) this.dueHeads.push({ fair: this.fairCandidate(oldest.group, oldest.at), remote: oldest.group.remote });
    }
    this.pushSlots.reconsider();
    const refusing = this.parkUntrusted(untrusted, config, offset, now);
    let pushingUnlisted = 0;
    for (const key of this.inFlight.keys()) if (!groups.has(key)) pushingUnlisted++;
    return { pendingUris: groups.size + refusing + pushingUnlisted, started, nextDueAt };
  }

  /**
   * The store is the truth: a remembered backoff holds only while its URI's state file is there;
   * one deleted (`refrelay retry`, or by hand) ends it on the next pass. One `readdir` of
   * uri-state/ (names only: one file per URI in backoff) on the passes that list waiting/ afresh,
   * and only while this node remembers a backoff. A file rewritten with an earlier notBefore is
   * not seen here; the push job reads it under the lock when the remembered backoff ends.
   */
  private async forgetClearedBackoffs(now: number): Promise<void> {
    const remembered: Array<{ key: string; schedule: UriSchedule; notBefore: number }> = [];
    for (const [key, schedule] of this.schedules) if (schedule.notBefore > now && !this.inFlight.has(key)) remembered.push({ key, schedule, notBefore: schedule.notBefore });
    if (remembered.length === 0) return;
    const listed = new Set(await this.deps.store.listUriStateKeys());
    for (const { key, schedule, notBefore } of remembered) {
      // Unless a job that ended during the readdir set a new backoff, its file written after it.
      if (!listed.has(key) && schedule.notBefore === notBefore) schedule.notBefore = 0;
    }
  }

  /**
   * The URIs due now (their host's circuit permitting) and when the next one is. The pass's parts
   * are methods of their own, and build their arrays with loops: V8 recompiles a function that
   * deoptimizes, and one pass-sized function cost 100 ms of compile each time.
   */
  private dueOf(groups: ReadonlyMap<string, UriGroup>, config: ReplicationConfig, offset: number, now: number, circuitsOpen: boolean, paced: boolean): { due: Due[]; nextDueAt: number | undefined } {
    const { deps } = this;
    const due: Due[] = [];
    let nextDueAt: number | undefined;
    const lastPass: Array<{ group: UriGroup; at: number }> = [];
    for (const group of groups.values()) {
      let schedule = this.schedules.get(group.uriKey);
      if (schedule === undefined) {
        this.schedules.set(group.uriKey, (schedule = { jitterMs: deps.random.next() * config.randomDelayMs, notBefore: 0, recheckAt: 0 }));
      }
      const at = this.dueAt(group, config, offset);
      lastPass.push({ group, at });
      if (this.inFlight.has(group.uriKey)) continue;
      if (at > now) {
        nextDueAt = nextDueAt === undefined ? at : Math.min(nextDueAt, at);
        continue;
      }
      // Parsing every URL on every pass would cost more than the pass itself: a URI's host is
      // looked up only while some circuit is open, and kept with its schedule.
      const host = circuitsOpen || paced ? (schedule.host ??= hostOf(group.uri)) : '';
      // A host whose circuit is open has nothing due; its URIs keep waiting, their retries unspent.
      if (circuitsOpen && this.circuits.gate(host) === 'blocked') continue;
      due.push({ group, at, host });
    }
    this.lastPass = lastPass;
    return { due, nextDueAt };
  }

  /**
   * Due URIs by fair-share group (lane and remote): the fair share picks a group, and the group
   * offers its oldest startable URI. Only one candidate per group reaches the fair share, so a
   * pass over 10,000 due URIs costs a scan per start, not a sort.
   */
  private bucketsOf(due: readonly Due[]): Bucket[] {
    const buckets: Bucket[] = [];
    const bucketsByRemote = new Map<RemoteConfig, { live?: Bucket; bulk?: Bucket }>();
    for (const entry of due) {
      let lanes = bucketsByRemote.get(entry.group.remote);
      if (lanes === undefined) bucketsByRemote.set(entry.group.remote, (lanes = {}));
      let bucket = lanes[entry.group.lane];
      if (bucket === undefined) buckets.push((bucket = lanes[entry.group.lane] = { entries: [], taken: new Set() }));
      bucket.entries.push(entry);
    }
    const candidates: FairCandidate[] = [];
    for (const bucket of buckets) candidates.push(this.fairCandidate(bucket.entries[0]!.group, bucket.entries[0]!.at));
    for (const job of this.inFlight.values()) candidates.push(job.fair);
    this.fairShare.observe(candidates);

    // With one group alone at work, fairness has nothing to choose: it may take ahead as many as
    // its threads, to keep the slots busy; with several, one each, so the waiters are a choice.
    const groupsAtWork = new Set<string>();
    for (const bucket of buckets) groupsAtWork.add(`${bucket.entries[0]!.group.lane}\u0000${bucket.entries[0]!.group.remote.name}`);
    for (const job of this.inFlight.values()) groupsAtWork.add(`${job.group.lane}\u0000${job.group.remote.name}`);
    this.soleGroupAtWork = groupsAtWork.size <= 1;
    return buckets;
  }

  /** Starts what the fair share picks among the due URIs, while there is room; returns how many. */
  private startDue(buckets: readonly Bucket[], due: readonly Due[], config: ReplicationConfig, now: number, circuitsOpen: boolean, paced: boolean): number {
    let started = 0;
    const pass: StartPass = { config, now, circuitsOpen, paced, takeAheadAfterMs: config.distributionIntervalMs + config.randomDelayMs, dueLeft: new Map(), room: new Map() };
    for (const { group } of due) pass.dueLeft.set(group.remote.name, (pass.dueLeft.get(group.remote.name) ?? 0) + 1);
    while (this.accepting && this.storeOutage.mayStart()) {
      pass.room = new Map();
      const heads: Array<{ entry: Due; fair: FairCandidate; bucket: { taken: Set<Due> } }> = [];
      for (const bucket of buckets) {
        const { group: first } = bucket.entries[0]!;
        // No room even for a URI taken ahead: nothing of this remote and lane can start now.
        if (!(this.hasRoom(first.remote, true, first.lane) && this.nodeHasRoom(config, true))) continue;
        const oldest = this.oldestLeft(bucket, pass);
        if (oldest !== undefined) heads.push({ entry: oldest, fair: this.fairCandidate(oldest.group, oldest.at), bucket });
      }
      const chosen = this.fairShare.choose(heads, (head) => head.fair);
      if (chosen === undefined) break;
      const { entry } = chosen;
      chosen.bucket.taken.add(entry);
      pass.dueLeft.set(entry.group.remote.name, (pass.dueLeft.get(entry.group.remote.name) ?? 1) - 1);
      const probe = circuitsOpen && this.circuits.gate(entry.host) === 'probe';
      if (paced) this.pacing.started(entry.host);
      if (probe) this.circuits.beginProbe(entry.host, entry.group.uriKey);
      const ahead = !(this.hasRoom(entry.group.remote, false, entry.group.lane) && this.nodeHasRoom(config, false));
      this.start(entry.group, chosen.fair, probe, ahead);
      this.storeOutage.started();
      started++;
    }
    return started;
  }

  /** The oldest entry of a bucket not taken yet that may start in `pass` (any, without one). */
  private oldestLeft(bucket: Bucket, pass?: StartPass): Due | undefined {
    let oldest: Due | undefined;
    for (const entry of bucket.entries) {
      if (bucket.taken.has(entry) || (oldest !== undefined && entry.at >= oldest.at) || (pass !== undefined && !this.startable(entry, pass))) continue;
      oldest = entry;
    }
    return oldest;
  }

  private startable({ group, at, host }: Due, pass: StartPass): boolean {
    const left = pass.dueLeft.get(group.remote.name) ?? 0;
    // Taken ahead (locked and claimed while the slots are busy) only when peers had a pass to
    // take it: a backlog, but not its tail (2 × threads URIs), which idle peers share out. A URI
    // not taken ahead still gets its turn: a freed slot is held for it when the fair share
    // prefers it to every waiter (see slotHeldFor).
    const takeAhead = pass.now - at >= pass.takeAheadAfterMs && left > 2 * group.remote.threads;
    const roomKey = `${takeAhead}\u0000${group.lane}\u0000${group.remote.name}`;
    let hasRoom = pass.room.get(roomKey);
    if (hasRoom === undefined) pass.room.set(roomKey, (hasRoom = this.hasRoom(group.remote, takeAhead, group.lane) && this.nodeHasRoom(pass.config, takeAhead)));
    if (!hasRoom || (pass.circuitsOpen && this.circuits.gate(host) === 'blocked')) return false;
    // An overloaded host: fewer pushes at once, and their starts spaced out.
    return !pass.paced || this.pacing.allows(host, this.jobsTo(host, true));
  }

  /**
   * The waiting tasks by URI. A pass that reuses the listing starts from the last grouping and
   * drops what this node claimed since (see WaitingListing.changes) — regrouping a backlog of
   * 100,000 tasks over 10,000 URIs on every freed slot cost 16 ms a pass, dropping one URI's claims
   * 1 ms; the result is the same grouping.
   */
  private async grouping(config: ReplicationConfig, reuse: boolean): Promise<Grouping> {
    const { store } = this.deps;
    const before = store.waitingChanges?.();
    const last = this.grouped;
    if (reuse && before !== undefined && last !== undefined && last.listing === before.listing) {
      const grouping = withoutTasks(config, last.grouping, before.forgotten.slice(last.applied), this.resolutions);
      this.grouped = { grouping, listing: before.listing, applied: before.forgotten.length };
      return grouping;
    }
    const forgottenBefore = before?.forgotten.length ?? 0;
    const waiting = await store.listWaiting({ cached: reuse });
    const grouping = groupWaiting(config, waiting, this.resolutions);
    const after = store.waitingChanges?.();
    // What the grouping already lacks may be dropped again (nothing happens): it starts from the
    // names forgotten before the cached listing was read, or from none after a fresh one. Another
    // listing under way or started meanwhile (the status page) moves the counter and leaves no
    // base: the next pass groups afresh. A fresh listing of new files moves it twice.
    if (before === undefined || after === undefined) this.grouped = undefined;
    else if (reuse) this.grouped = after.listing === before.listing ? { grouping, listing: before.listing, applied: forgottenBefore } : undefined;
    else this.grouped = after.listing === before.listing + 1 || after.listing === before.listing + 2 ? { grouping, listing: after.listing, applied: 0 } : undefined;
    return grouping;
  }

  /**
   * Task files no configured remote accepts are parked in failed/, once they have waited long
   * enough for a config change rolling through the cluster (reload, restart) to reach this node:
   * lockStale plus two passes. Returns how many URIs still have such tasks (a drain waits for them).
   */
  private parkUntrusted(untrusted: readonly UntrustedTask[], config: ReplicationConfig, offset: number, now: number): number {
    if (untrusted.length === 0) return 0;
    const graceMs = config.lockStaleMs + 2 * (config.distributionIntervalMs + config.randomDelayMs);
    const byUri = new Map<string, { uri: string; tasks: UntrustedTask[] }>();
    for (const entry of untrusted) {
      let batch = byUri.get(entry.uriKey);
      if (batch === undefined) byUri.set(entry.uriKey, (batch = { uri: entry.item.task.uri, tasks: [] }));
      if (now - (entry.item.mtimeMs - offset) >= graceMs) batch.tasks.push(entry);
    }
    for (const [key, { uri, tasks }] of byUri) {
      if (tasks.length === 0 || this.parking.has(key) || this.inFlight.has(key) || !this.accepting) continue;
      const parking = parkUntrusted(this.jobDeps, key, uri, tasks)
        .then((parked) => {
          this.failedToFailedDir += parked;
        })
        .catch((error: unknown) => this.deps.log.error({ uri: redactUrl(uri), err: error instanceof Error ? error.message : String(error) }, 'could not park refused tasks'))
        .finally(() => {
          this.parking.delete(key);
          this.onSlotFree();
        });
      this.parking.set(key, parking);
    }
    return byUri.size;
  }

  /** Jobs of this node pushing to `host`; `activeOnly`: only those whose pushes are not over. */
  private jobsTo(host: string, activeOnly: boolean): number {
    let jobs = 0;
    for (const job of this.inFlight.values()) if (job.host === host && (job.phase.active || !activeOnly)) jobs++;
    return jobs;
  }

  private fairCandidate(group: UriGroup, dueAt: number): FairCandidate {
    return { lane: group.lane, remote: group.remote.name, remoteShares: group.remote.shares, dueAt };
  }

  /** mtimes are the store's clock; `offset` converts them to ours. */
  private dueAt(group: UriGroup, config: ReplicationConfig, offset: number): number {
    const schedule = this.schedules.get(group.uriKey);
    const batchDue = group.oldestMtimeMs - offset + Math.max(group.remote.replicationDelayMs, config.distributionIntervalMs) + (schedule?.jitterMs ?? 0);
    return Math.max(batchDue, schedule?.notBefore ?? 0, schedule?.recheckAt ?? 0);
  }

  /** What this node plans, as of its last pass: next push per URI, backoff, running pushes. */
  schedule(nodeId: string): NodeSchedule {
    const now = this.deps.clock.now();
    const uris: Array<NodeSchedule['uris'][number]> = [];
    const listed = new Set<string>();
    for (const { group, at } of this.lastPass) {
      listed.add(group.uriKey);
      const job = this.inFlight.get(group.uriKey);
      const notBefore = this.schedules.get(group.uriKey)?.notBefore ?? 0;
      uris.push({
        uri: redactUrl(group.uri),
        remote: group.remote.name,
        lane: group.lane,
        waiting: group.tasks.length,
        nextDueInMs: job === undefined ? at - now : null,
        backoffUntilMs: notBefore > now ? notBefore - now : null,
        running: job !== undefined,
        runningForMs: job === undefined ? null : now - job.startedAt,
      });
    }
    for (const job of this.inFlight.values()) {
      if (listed.has(job.group.uriKey)) continue;
      uris.push({ uri: redactUrl(job.group.uri), remote: job.group.remote.name, lane: job.group.lane, waiting: 0, nextDueInMs: null, backoffUntilMs: null, running: true, runningForMs: now - job.startedAt });
    }
    uris.sort((a, b) => Number(b.running) - Number(a.running) || (a.nextDueInMs ?? 0) - (b.nextDueInMs ?? 0));
    const config = this.deps.config();
    return {
      nodeId,
      maxPushes: config.maxPushes,
      pushing: this.pushSlots.total,
      uris,
      fairShare: this.fairShare.view(),
      circuits: this.circuits.view().map((view) => ({ ...view, nextProbeInMs: view.nextProbeAt === null ? null : Math.max(0, view.nextProbeAt - now) })),
      pacedHosts: this.pacing.view(),
    };
  }

  /**
   * A freed slot is held (left free) instead of going to `best`, the fair share's choice among the
   * jobs waiting for one, when it prefers a URI that is not claimed yet — a group with nothing
   * taken ahead (the tail of a backlog, a live push behind a replicate-all) — or a job still
   * taking its lock. The pass that the freed slot triggers starts that URI, and it takes the slot.
   */
  private slotHeldFor(best: FairCandidate): boolean {
    const starting: InFlight[] = [];
    for (const job of this.inFlight.values()) {
      if (job.phase.active && !job.phase.granted && !job.phase.ahead && !job.phase.waiting && (job.fair.lane !== best.lane || job.fair.remote !== best.remote)) starting.push(job);
    }
    // Jobs of other groups started for free slots and still taking their locks come before jobs
    // taken ahead (within one group, which URI goes first does not matter).
    if (starting.some((job) => this.pushSlots.busy(job.group.remote.name) < this.threadsOf(job.group.remote.name))) return true;
    const config = this.deps.config();
    // Only for URIs the next pass can start: held for anything else, the slot would stay idle.
    const canStart = (remote: RemoteConfig): boolean =>
      this.accepting &&
      this.inFlight.size < 3 * config.maxPushes &&
      this.pushSlots.busy(remote.name) < this.threadsOf(remote.name) &&
      this.occupancy(remote.name).jobs < 3 * remote.threads;
    // Within one group any URI may go first; only another group can have the better claim.
    const rivals = this.dueHeads.filter((head) => (head.fair.lane !== best.lane || head.fair.remote !== best.remote) && canStart(head.remote)).map((head) => head.fair);
    if (rivals.length === 0) return false;
    // The waiter's own reservation is in its group's key; a rival would bring one too.
    const rivalSet = new Set(rivals);
    return this.fairShare.choose([best, ...rivals], (candidate) => candidate, (candidate) => rivalSet.has(candidate)) !== best;
  }

  /**
   * A fair-share group (lane and remote) has at most one job taken ahead (waiting for a slot) while
   * other groups have work too (as many as its threads when it is alone): so
   * every group with work has its candidate among the waiters when a slot frees and the fair share
   * chooses between them there — a backlog cannot fill the waiting places with its own jobs, and a
   * live URI that becomes due while a replicate-all keeps every slot busy gets the next slot.
   */
  private hasRoom(remote: UriGroup['remote'], takeAhead: boolean, lane: Lane): boolean {
    const { jobs, active, ownSlots, aheadInLane } = this.occupancy(remote.name, lane);
    if (jobs >= 3 * remote.threads) return false;
    const aheadLimit = this.soleGroupAtWork ? remote.threads : 1;
    return ownSlots < remote.threads || (takeAhead && aheadInLane < aheadLimit && active < 2 * remote.threads);
  }

  /** `maxPushes` bounds this node's jobs as `threads` bounds a remote's (see hasRoom). */
  private nodeHasRoom(config: ReplicationConfig, takeAhead: boolean): boolean {
    const { jobs, active, ownSlots } = this.occupancy();
    if (jobs >= 3 * config.maxPushes) return false;
    return ownSlots < config.maxPushes || (takeAhead && active < 2 * config.maxPushes);
  }

  /**
   * This node's jobs (of `remote`, or all): in flight, with pushes not over (`active`), owning a
   * slot (pushing, or started for a free one; jobs taken ahead own none), and taken ahead in `lane`.
   */
  private occupancy(remote?: string, lane?: Lane): { jobs: number; active: number; ownSlots: number; aheadInLane: number } {
    const counts = { jobs: 0, active: 0, ownSlots: 0, aheadInLane: 0 };
    for (const job of this.inFlight.values()) {
      if (remote !== undefined && job.group.remote.name !== remote) continue;
      counts.jobs++;
      if (!job.phase.active) continue;
      counts.active++;
      if (job.phase.granted || !job.phase.ahead) counts.ownSlots++;
      else if (job.group.lane === lane) counts.aheadInLane++;
    }
    return counts;
  }

  private threadsOf(remote: string): number {
    return this.deps.config().remotes.find((candidate) => candidate.name === remote)?.threads ?? 1;
  }

  /** `ahead`: started while no slot was free, to wait for one (taken ahead). */
  private start(group: UriGroup, fair: FairCandidate, probe: boolean, ahead: boolean): void {
    const controller = new AbortController();
    const startedAt = this.deps.clock.now();
    const phase = { active: true, granted: false, waiting: false, ahead };
    const remoteSlot = this.pushSlots.slot(group.remote.name, () => this.threadsOf(group.remote.name), { candidate: fair, reservation: this.fairShare.reserve(fair), ahead });
    const slot = new JobSlot(remoteSlot, phase, this.onSlotFree);
    const done = runPushJob(this.jobDeps, group, controller.signal, slot).then(
      (result) => this.finished(group, result),
      (error: unknown) => {
        const err = error instanceof Error ? error.message : String(error);
        const store = this.storeOutage.failed('push', error, 'push job failed');
        if (store === undefined) this.deps.log.error({ uri: redactUrl(group.uri), err }, 'push job failed');
        else if (store.log) this.deps.log.error({ uri: redactUrl(group.uri), err, code: store.code, suppressed: store.suppressed, retryInMs: store.retryInMs }, 'push job failed');
        this.finished(group, { kind: 'locked' }, true);
      },
    );
    const schedule = this.schedules.get(group.uriKey);
    const host = schedule === undefined ? hostOf(group.uri) : (schedule.host ??= hostOf(group.uri));
    this.inFlight.set(group.uriKey, { group, fair, probe, host, controller, startedAt, done, phase });
  }

  /** `threw`: the job failed with an error (already reported), not with a result. */
  private finished(group: UriGroup, result: JobResult, threw = false): void {
    const job = this.inFlight.get(group.uriKey);
    this.inFlight.delete(group.uriKey);
    this.noteStore(result, threw);
    // A probe that never reached git (lock taken, nothing left to push, stopped) leaves the
    // circuit as it was, ready for another probe; one that pushed already told the circuit.
    if (job?.probe === true && !['pushed', 'retry', 'failed', 'host-down'].includes(result.kind)) this.circuits.probeAbandoned(hostOf(group.uri), group.uriKey);
    const config = this.deps.config();
    const now = this.deps.clock.now();
    const schedule = this.schedules.get(group.uriKey) ?? { jitterMs: 0, notBefore: 0, recheckAt: 0 };
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
        schedule.recheckAt = now + group.remote.rescheduleDelayMs;
        schedule.notBefore = 0;
        schedule.jitterMs = this.deps.random.next() * config.randomDelayMs;
    }
    // Parked rejected refs count too: anything that ended in failed/ makes `--drain` exit 1.
    this.failedToFailedDir += movedToFailed(result);
    this.schedules.set(group.uriKey, schedule);
    this.onSlotFree();
  }

  /**
   * What a job's end says about the store: a job that took its lock wrote an owner record, so
   * the store works again; one stopped by its own heartbeat met a failing store (logged by
   * the job). A lock refused (EEXIST) wrote nothing and says neither.
   */
  private noteStore(result: JobResult, threw: boolean): void {
    const outage = this.storeOutage;
    outage.ended();
    if (result.kind === 'stalled') outage.failed('push', result.error, 'lock heartbeat writes failed', storeFailureCode(result.error) ?? 'STALLED');
    else if (!threw && result.kind !== 'locked' && outage.succeeded('push')) this.deps.log.info({}, 'the store works again');
  }
}

/**
 * A job's slot as the distributor sees it: the remote's slot, with the job's phase kept up to
 * date. A class, not closures made per push (see RemoteSlot in push-slots.ts).
 */
class JobSlot implements PushSlot {
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
