import type { OpenCircuit } from '../cluster/node-heartbeat.js';
import { redactUrl } from '../runtime/redact.js';
import type { HostHealth, SchedulerDeps } from './ports.js';
import { movedToFailed, runPushJob, type JobResult } from './push-job.js';
import { PushSlots } from './push-slots.js';
import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { FairShare, type FairCandidate } from './fair-share.js';
import { HostCircuits } from './host-circuit.js';
import { HostPacing } from './host-pacing.js';
import { hostOf } from '../push/destination-host.js';
import type { UntrustedTask, UriGroup } from './uri-groups.js';
import { WaitingGrouping } from './waiting-grouping.js';
import { slotHeldFor, startDue, type SlotHolder, type Starter } from './start-pass.js';
import { parkUntrusted } from './park-untrusted.js';
import { StoreOutage, storeFailureCode } from './store-outage.js';
import { bucketsOf, dueOf, fairCandidate, oldestLeft, rescheduleAfter, type Bucket, type Due, type PassEntry, type UriSchedule } from './due-planner.js';
import { hasRoom, jobsTo, JobSlot, nodeHasRoom, threadsOf, type InFlight } from './in-flight.js';
import { nodeSchedule, type NodeSchedule } from './schedule-view.js';

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
  private readonly waiting: WaitingGrouping;
  private readonly starter: Starter;
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
  private lastPass: PassEntry[] = [];
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
    this.pushSlots = new PushSlots({ nodeLimit: () => deps.config().maxPushes, fairShare: this.fairShare, hold: (best) => slotHeldFor(this.slotHolder(), best) });
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
        pacing.overloaded(host, jobsTo(this.inFlight.values(), host, false), retryAfterMs);
        return true;
      },
    };
    this.jobDeps = { ...deps, hosts };
    this.waiting = new WaitingGrouping(deps.store);
    this.starter = {
      fairShare: this.fairShare,
      circuits,
      pacing,
      storeOutage: this.storeOutage,
      accepting: () => this.accepting,
      hasRoom: (remote, takeAhead, lane) => hasRoom(this.inFlight.values(), this.soleGroupAtWork, remote, takeAhead, lane),
      nodeHasRoom: (config, takeAhead) => nodeHasRoom(this.inFlight.values(), config, takeAhead),
      activeJobsTo: (host) => jobsTo(this.inFlight.values(), host, true),
      start: (group, fair, probe, ahead) => this.start(group, fair, probe, ahead),
    };
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
    const { groups, untrusted } = await this.waiting.grouping(config, options.reuseListing === true);
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
    const started = startDue(this.starter, buckets, due, config, now, circuitsOpen, paced);
    // What could not start now, one per group, for the fair share's choice when a slot frees.
    this.dueHeads = [];
    for (const bucket of buckets) {
      const oldest = oldestLeft(bucket);
      if (oldest !== undefined) this.dueHeads.push({ fair: fairCandidate(oldest.group, oldest.at), remote: oldest.group.remote });
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

  /** The pass's due URIs (see dueOf in due-planner.ts); keeps the view of every waiting URI for `/status`. */
  private dueOf(groups: ReadonlyMap<string, UriGroup>, config: ReplicationConfig, offset: number, now: number, circuitsOpen: boolean, paced: boolean): { due: Due[]; nextDueAt: number | undefined } {
    const { circuits } = this;
    const { due, nextDueAt, lastPass } = dueOf({ schedules: this.schedules, inFlight: this.inFlight, random: this.deps.random, gate: (host) => circuits.gate(host) }, groups, config, offset, now, circuitsOpen, paced);
    this.lastPass = lastPass;
    return { due, nextDueAt };
  }

  /** The due URIs by fair-share group (see bucketsOf in due-planner.ts); the fair share observes every group at work. */
  private bucketsOf(due: readonly Due[]): Bucket[] {
    const { buckets, candidates, soleGroupAtWork } = bucketsOf(due, this.inFlight.values());
    this.fairShare.observe(candidates);
    this.soleGroupAtWork = soleGroupAtWork;
    return buckets;
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

  /** What this node plans, as of its last pass: next push per URI, backoff, running pushes. */
  schedule(nodeId: string): NodeSchedule {
    const now = this.deps.clock.now();
    const { schedules, inFlight, lastPass, fairShare, circuits, pacing } = this;
    return nodeSchedule(nodeId, { now, maxPushes: this.deps.config().maxPushes, pushing: this.pushSlots.total, lastPass, inFlight, schedules, fairShare, circuits, pacing });
  }

  /** What `slotHeldFor` reads; `dueHeads` is replaced on every pass. */
  private slotHolder(): SlotHolder {
    const { inFlight, pushSlots, fairShare, dueHeads } = this;
    return { inFlight, pushSlots, fairShare, dueHeads, accepting: () => this.accepting, config: () => this.deps.config(), threadsOf: (remote) => this.threadsOf(remote) };
  }

  private threadsOf(remote: string): number {
    return threadsOf(this.deps.config(), remote);
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
    rescheduleAfter(schedule, result, config, now, group.remote.rescheduleDelayMs, this.deps.random);
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
