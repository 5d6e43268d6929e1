import type { OpenCircuit } from '../cluster/node-heartbeat.js';
import { redactUrl } from '../runtime/redact.js';
import type { HostHealth, SchedulerDeps } from './ports.js';
import { movedToFailed, type JobResult } from './job-result.js';
import { runPushJob } from './push-job.js';
import { PushSlots, type PushSlot } from './push-slots.js';
import type { ReplicationConfig } from '../config/types.js';
import { FairShare, type FairCandidate } from './fair-share.js';
import { HostCircuits } from './host-circuit.js';
import { HostPacing } from './host-pacing.js';
import { hostOf } from '../push/destination-host.js';
import type { UntrustedFolder, UriGroup } from './uri-groups.js';
import { UriTracker } from './uri-tracker.js';
import { slotHeldFor, startDue, threadsOf, type DueHead } from './start-pass.js';
import { parkUntrusted, untrustedByUri } from './park-untrusted.js';
import { StoreOutage, storeFailureCode } from './store-outage.js';
import { planDue, scheduleAfter } from './due-planner.js';
import { jobsTo, type Job } from './job-table.js';
import { nodeSchedule, type NodeSchedule } from './schedule-view.js';
import { listedUris, oldestByRemote, type WaitingUri } from './waiting-uris.js';
import { ReadAheadSoon } from './read-ahead-soon.js';

/** The live lane's weight; `replication.bulkShares` is set against it. */
export const LIVE_SHARES = 100;

export interface TickReport {
  /** URIs with work this node may take (waiting, or being pushed by this node); a reused listing may miss some. */
  readonly pendingUris: number;
  readonly started: number;
  /** Earliest local time at which a waiting URI becomes due; undefined when none waits. */
  readonly nextDueAt: number | undefined;
  /** Waiting folders seen but not read yet: a node that starts on a big backlog learns it over several passes. */
  readonly unlearned: number;
}

/**
 * The distributor: every pass takes in what changed in `waiting/` (uri-tracker.ts keeps the
 * waiting URIs between passes), and starts a push for each URI whose due time has come — oldest task mtime + max(replicationDelay, distributionInterval)
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
 * the tail of a backlog, which peers share out. How many jobs a remote and the node may have in
 * each phase: job-table.ts.
 */
export class Distributor {
  private readonly jobs = new Map<string, Job>();
  /** The waiting URIs as this node knows them between passes: groups, schedules, due index. */
  private readonly uris: UriTracker;
  private readonly fairShare: FairShare;
  private readonly circuits: HostCircuits;
  private readonly pacing: HostPacing;
  private readonly pushSlots: PushSlots;
  private readonly jobDeps: SchedulerDeps;
  /** Store failures of this node (jobs, passes, heartbeats): job starts back off while it fails. */
  readonly storeOutage: StoreOutage;
  /** Each group's oldest due URI the last pass could not start. */
  private heads: readonly DueHead[] = [];
  /** The refused folders of the last pass; undefined before the first (the endpoints then list the store). */
  private untrusted: readonly UntrustedFolder[] | undefined;
  private accepting = true;
  private failedToFailedDir = 0;
  /** URIs whose refused task files are being moved to failed/ right now. */
  private readonly parking = new Map<string, Promise<void>>();
  private readonly readAhead: ReadAheadSoon;

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
    this.pushSlots = new PushSlots({
      nodeLimit: () => deps.config().maxPushes,
      fairShare: this.fairShare,
      hold: (best) =>
        slotHeldFor(
          { jobs: this.jobs, pushSlots: this.pushSlots, fairShare: this.fairShare, heads: this.heads, accepting: this.accepting, config: deps.config() },
          best,
        ),
    });
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
        pacing.overloaded(host, jobsTo(this.jobs, host, false), retryAfterMs);
        return true;
      },
    };
    this.jobDeps = { ...deps, hosts };
    this.uris = new UriTracker(deps, this.jobs);
    this.readAhead = new ReadAheadSoon(deps.store);
  }

  /** Push jobs, and jobs parking refused task files. */
  get runningCount(): number {
    return this.jobs.size + this.parking.size;
  }

  /** How many task files this node put in failed/ since it started (whole tasks and parked rejected refs). */
  get failedCount(): number {
    return this.failedToFailedDir;
  }

  /** Hosts whose circuit is open on this node. */
  openCircuits(): OpenCircuit[] {
    return this.circuits
      .view()
      .flatMap((view) =>
        view.state === 'closed' ? [] : [{ host: view.host, state: view.state, trips: view.trips, nextProbeAt: view.nextProbeAt, lastError: view.lastError }],
      );
  }

  /**
   * The waiting tasks per URI as the last pass listed them (minus what this node claimed since, for
   * a pass that reused the listing); undefined before the first pass. Refused tasks count too.
   */
  waitingUris(): Iterable<WaitingUri> | undefined {
    return this.untrusted === undefined ? undefined : listedUris(this.uris.groups, this.untrusted);
  }

  /** How many records waitingUris yields (refused folders each count as one); undefined before the first pass. */
  waitingUriCount(): number | undefined {
    return this.untrusted === undefined ? undefined : this.uris.groups.size + this.untrusted.length;
  }

  /** The oldest waiting task's age per remote, as the last pass listed them; undefined before the first pass. */
  oldestWaitingByRemote(now: number): Map<string, number> | undefined {
    return this.untrusted === undefined ? undefined : oldestByRemote(this.uris.groups, this.untrusted, now);
  }

  runningUris(): string[] {
    return [...this.jobs.values()].map((job) => redactUrl(job.group.uri));
  }

  /** A URI whose tasks were just recovered from a dead holder: push it on the next pass (UriTracker.expedite). */
  expedite(uriKey: string): void {
    this.uris.expedite(uriKey);
  }

  /** Stop starting pushes; running ones go on (graceful shutdown, first phase). */
  stopAccepting(): void {
    this.accepting = false;
  }

  abortAll(): void {
    for (const job of this.jobs.values()) job.controller.abort();
  }

  async whenIdle(): Promise<void> {
    while (this.jobs.size > 0 || this.parking.size > 0) await Promise.all([...[...this.jobs.values()].map((job) => job.done), ...this.parking.values()]);
  }

  /**
   * One pass. `reuseListing`: work from what this node knows (the last listing minus its claims
   * since) instead of reading `waiting/` again — for the passes a freed push slot triggers, which
   * in a backlog come many times per distributionInterval; the periodic pass lists afresh. Either
   * way only the URIs whose folders changed are regrouped and indexed again.
   */
  async tick(options: { reuseListing?: boolean; unreadChangesMayWaitMs?: number } = {}): Promise<TickReport> {
    const { deps, jobs } = this;
    const config = deps.config();
    const reuse = options.reuseListing === true;
    // A listing reused from memory reads no new name, so it needs no turn.
    const preferredTurn = reuse ? undefined : this.uris.preferredTurn(deps.clock.now(), deps.storeClockOffsetMs?.() ?? 0);
    const listing = await deps.store.listWaiting({ cached: reuse, unreadChangesMayWaitMs: options.unreadChangesMayWaitMs, preferredTurn });
    await this.uris.update(config, listing, !reuse);
    const { groups } = this.uris;

    const offsetMs = deps.storeClockOffsetMs?.() ?? 0;
    const now = deps.clock.now();
    const { circuits } = this;
    const { index } = this.uris;
    const plan = planDue(index, jobs, now, offsetMs, circuits.anyOpen() ? (host) => circuits.gate(host) : undefined);
    this.fairShare.observe(plan.candidates);
    const { fairShare, pacing, storeOutage, accepting } = this;
    const start = (group: UriGroup, fair: FairCandidate, probe: boolean, ahead: boolean): void => this.start(group, fair, probe, ahead);
    const { started, heads } = startDue({ jobs, index, fairShare, circuits, pacing, storeOutage, accepting, start }, plan, config, now);
    this.heads = heads;
    if (accepting) this.readAhead.afterPass(index, now, offsetMs, config);
    const untrusted = this.uris.untrusted();
    this.untrusted = untrusted;
    this.pushSlots.reconsider();
    const refusing = this.parkUntrusted(untrusted, config, offsetMs, now);
    let pushingUnlisted = 0;
    for (const key of jobs.keys()) if (!groups.has(key)) pushingUnlisted++;
    // Folders not learned yet (a node that started on a big backlog, or left to another node's
    // turn) and flat files to sort are work too.
    const unseen = listing.unlearned + listing.leftToPreferred + listing.loose.length;
    return { pendingUris: groups.size + refusing + pushingUnlisted + unseen, started, nextDueAt: plan.nextDueAt, unlearned: listing.unlearned };
  }

  /**
   * Folders whose task no configured remote accepts are parked in failed/ once past their grace
   * (park-untrusted.ts). Returns how many URIs still have such tasks (a drain waits for them).
   */
  private parkUntrusted(untrusted: readonly UntrustedFolder[], config: ReplicationConfig, offset: number, now: number): number {
    const byUri = untrustedByUri(untrusted, config, offset, now);
    for (const [key, { uri, due }] of byUri) {
      if (!due || this.parking.has(key) || this.jobs.has(key) || !this.accepting) continue;
      const parking = parkUntrusted(this.jobDeps, key, uri, offset)
        .then((parked) => {
          this.failedToFailedDir += parked;
        })
        .catch((error: unknown) =>
          this.deps.log.error({ uri: redactUrl(uri), err: error instanceof Error ? error.message : String(error) }, 'could not park refused tasks'),
        )
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
    const { jobs, fairShare, circuits, pacing } = this;
    const { schedules } = this.uris;
    const waiting = this.uris.waitingView(this.deps.storeClockOffsetMs?.() ?? 0);
    return nodeSchedule(nodeId, {
      now: this.deps.clock.now(),
      maxPushes: this.deps.config().maxPushes,
      pushing: this.pushSlots.total,
      waiting,
      jobs,
      schedules,
      fairShare,
      circuits,
      pacing,
    });
  }

  /** `ahead`: started while no slot was free, to wait for one (taken ahead). */
  private start(group: UriGroup, fair: FairCandidate, probe: boolean, ahead: boolean): void {
    const remote = group.remote.name;
    const host = this.uris.schedules.get(group.uriKey)?.host ?? hostOf(group.uri);
    const job: Job = {
      group,
      fair,
      probe,
      host,
      controller: new AbortController(),
      startedAt: this.deps.clock.now(),
      phase: { kind: 'claiming', ahead },
      done: Promise.resolve(),
    };
    const remoteSlot = this.pushSlots.slot(remote, () => threadsOf(this.deps.config(), remote), {
      candidate: fair,
      reservation: this.fairShare.reserve(fair),
      ahead,
    });
    // The remote's slot, with the job's phase kept up to date; its release frees the slot for the next URI.
    const slot: PushSlot = {
      acquire: async (signal) => {
        if (job.phase.kind === 'claiming') job.phase = { kind: 'waiting', ahead };
        const granted = await remoteSlot.acquire(signal);
        if (granted && job.phase.kind === 'waiting') job.phase = { kind: 'pushing' };
        return granted;
      },
      release: () => {
        remoteSlot.release();
        if (job.phase.kind === 'settling') return;
        job.phase = { kind: 'settling' };
        this.onSlotFree();
      },
    };
    this.jobs.set(group.uriKey, job);
    this.uris.reindex(group.uriKey);
    job.done = runPushJob(this.jobDeps, group, job.controller.signal, slot).then(
      (result) => this.finished(group, result),
      (error: unknown) => {
        const err = error instanceof Error ? error.message : String(error);
        const store = this.storeOutage.failed('push', error, 'push job failed');
        if (store === undefined) this.deps.log.error({ uri: redactUrl(group.uri), err }, 'push job failed');
        else if (store.log)
          this.deps.log.error(
            { uri: redactUrl(group.uri), err, code: store.code, suppressed: store.suppressed, retryInMs: store.retryInMs },
            'push job failed',
          );
        this.finished(group, { kind: 'locked' }, true);
      },
    );
  }

  /** `threw`: the job failed with an error (already reported), not with a result. */
  private finished(group: UriGroup, result: JobResult, threw = false): void {
    const job = this.jobs.get(group.uriKey);
    this.jobs.delete(group.uriKey);
    this.noteStore(result, threw);
    // A probe that never reached git (lock taken, nothing left to push, stopped) leaves the
    // circuit as it was, ready for another probe; one that pushed already told the circuit.
    if (job?.probe === true && !['pushed', 'retry', 'failed', 'host-down'].includes(result.kind)) this.circuits.probeAbandoned(hostOf(group.uri), group.uriKey);
    const schedule = this.uris.schedules.get(group.uriKey) ?? { jitterMs: 0, notBefore: 0, recheckAt: 0 };
    this.uris.setSchedule(
      group.uriKey,
      scheduleAfter(schedule, result, this.deps.config(), this.deps.clock.now(), group.remote.rescheduleDelayMs, this.deps.random),
    );
    // Parked rejected refs count too: anything that ended in failed/ makes `--drain` exit 1.
    this.failedToFailedDir += movedToFailed(result);
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
