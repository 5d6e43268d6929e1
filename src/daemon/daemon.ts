import { join } from 'node:path';
import type { ReplicationConfig } from '../config/types.js';
import type { Health } from '../observe/http-server.js';
import { RefWatcher } from '../intake/ref-watcher.js';
import { REF_SNAPSHOTS_DIR, SavedRefSnapshots } from '../intake/saved-ref-snapshots.js';
import { runEvery } from '../runtime/run-every.js';
import { unreadChangesMayWaitMs } from '../schedule/due-planner.js';
import type { WakeReason } from '../runtime/waker.js';
import { reportHeartbeatFailure, reportPassFailure, reportSpoolFailure, reportStoreWorks } from './store-failure-reports.js';
import { DONE_SWEEP_QUIET_MS } from './done-sweeper.js';
import type { DaemonOptions } from './daemon-options.js';
import { nodeHealth } from './node-health.js';
import { nodeParts, type DaemonParts } from './node-parts.js';
import { replicateIfFirstOfCluster } from './startup-replication.js';
import { SWEEP_EVERY_MS, sweepStoreLeftovers } from './store-sweep.js';

/** While the local spool holds tasks the store did not take yet, passes come at least this often. */
const SPOOL_RETRY_MS = 1000;
/** The clock offset is measured again every this many heartbeats. */
const BEATS_PER_CLOCK_PROBE = 6;
/** How often the live nodes are read from nodes/: a joining or leaving node moves its URIs this much later. */
const MEMBERSHIP_EVERY_MS = 10_000;

export type { DaemonObservability, DaemonOptions, DaemonView, NodeCollaborators } from './daemon-options.js';

/**
 * What a pass asks of the loop: sleep this long (or until woken), `list-again` at once, or stop
 * (`drained`: a drain found nothing left).
 */
export type PassOutcome = number | 'list-again' | 'drained';

/** Passes (and stale-lock observations) come at least this often. */
function passEveryMs(config: ReplicationConfig): number {
  return Math.min(config.distributionIntervalMs, config.lockStaleMs / 6);
}

/**
 * One refrelay node: checks its node id is free, recovers its own earlier claims, then runs
 * passes (`tick`) until stopped (or, with drain, until no work is left) — beating its node
 * heartbeat, measuring its clock against the store's, and taking over stale locks of dead peers.
 */
export class Daemon {
  private readonly parts: DaemonParts;
  private stopping = false;
  private endWatch: (() => void) | undefined;
  private refWatcher: RefWatcher | undefined;
  /** Monotonic time of the last completed distributor pass, of its last fresh listing, and the last heartbeat outcome. */
  private lastPassAt: number | undefined;
  private readonly startedAt: number;
  /** Said once: every waiting folder has been read once (see WaitingFolders). */
  private queueLearned = false;
  /** Waiting folders not read yet, as of the last pass. */
  private unlearned = Number.POSITIVE_INFINITY;
  private listedAt = Number.NEGATIVE_INFINITY;
  /** Monotonic start of the last pass not woken by a freed slot: the periodic pass comes one interval after it. */
  private periodFrom = Number.NEGATIVE_INFINITY;
  private heartbeatError: string | undefined;
  private beats = 0;
  private readonly beatEvery: () => Promise<void>;
  private readonly observeEvery: () => Promise<void>;
  private readonly sweepEvery: () => Promise<void>;
  private readonly membershipEvery: () => Promise<void>;

  constructor(private readonly options: DaemonOptions) {
    this.parts = nodeParts(options);
    const { clock, store, log } = options;
    this.startedAt = clock.monotonic();
    this.beatEvery = runEvery(
      clock,
      () => this.config.distributionIntervalMs,
      async () => {
        if (this.beats++ % BEATS_PER_CLOCK_PROBE === 0) await this.measureOffset();
        await this.beat();
      },
    );
    // Apart from the pass: a lock folder the observer cannot read must not stop the pushes.
    this.observeEvery = runEvery(
      clock,
      () => passEveryMs(this.config),
      () =>
        this.parts.recovery
          .pass(this.parts.leases.ownLeases, this.parts.leases.ownLocks)
          .catch((error: unknown) => reportPassFailure(this.parts.distributor.storeOutage, log, error)),
    );
    this.sweepEvery = runEvery(
      clock,
      () => SWEEP_EVERY_MS,
      () => sweepStoreLeftovers(store, this.config.retentionMs, log),
    );
    // Who else is alive decides which URIs this node is offered first (schedule/preferred-node.ts).
    // A failed read keeps the last list: nodes/ is where the heartbeat writes, which reports it.
    this.membershipEvery = runEvery(
      clock,
      () => MEMBERSHIP_EVERY_MS,
      () => this.parts.liveNodes.refresh().catch(() => undefined),
    );
  }

  /** The config in force: replaced by a valid reload, read afresh by every pass and push. */
  private get config(): ReplicationConfig {
    return this.parts.configs.current;
  }

  /** Task files this node's jobs put in failed/ since it started. */
  get failedTasks(): number {
    return this.parts.distributor.failedCount;
  }

  get spooledTasks(): number {
    return this.parts.spool?.waiting ?? 0;
  }

  /** Apply the config file as it is now (ConfigReloader.reload): false when it was refused. */
  reload(reason: string, files?: readonly string[]): boolean {
    return this.parts.configs.reload(reason, files);
  }

  requestStop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.parts.distributor.stopAccepting();
    this.parts.waker.wake();
  }

  /** Runs until stopped or drained. Resolves with the exit code. */
  async run(): Promise<number> {
    const { log, observability } = this.options;
    const config = this.config;
    if (this.stopping) {
      // Asked to stop while it read its config: no heartbeat, recovery or start-up sync to undo.
      log.info({ nodeId: config.nodeId }, 'refrelay node stopped before it started');
      await this.options.pusher.close?.();
      return 0;
    }
    log.info({ nodeId: config.nodeId, pid: this.options.pid, store: config.storePath, drain: this.options.drain }, 'refrelay node starting');
    // Before anything reads or writes there: a path without the store marker is refused.
    await this.options.store.open();
    await this.parts.assertNodeIdFree();
    await observability?.start({
      config: () => this.config,
      health: () => this.health(),
      schedule: () => this.parts.distributor.schedule(config.nodeId),
      storeClockOffsetMs: () => this.parts.offset.current() ?? 0,
      spooledTasks: () => this.spooledTasks,
      storeWritable: () => this.parts.distributor.storeOutage.view() === undefined && this.heartbeatError === undefined,
      runningPushes: () => this.parts.distributor.runningUris().length,
      waitingUris: () => this.parts.distributor.waitingUris(),
      waitingUriCount: () => this.parts.distributor.waitingUriCount(),
      oldestWaitingByRemote: (now) => this.parts.distributor.oldestWaitingByRemote(now),
      queueLearned: () => this.unlearned === 0,
    });
    try {
      await this.start();
      let woke: WakeReason = 'other';
      while (!this.stopping) {
        const outcome = await this.tick(woke);
        if (outcome === 'drained') break;
        // A reused listing cannot end a drain, but it says the end is near: list afresh now
        // instead of after a whole interval.
        woke = outcome === 'list-again' ? 'other' : await this.parts.waker.wait(outcome);
      }
      return await this.stop();
    } finally {
      await observability?.stop();
      await this.options.pusher.close?.().catch((error: unknown) => log.warn({ err: String(error) }, 'could not close shared ssh connections'));
    }
  }

  /** Start-up once the node id is known free: first heartbeat, own earlier claims, watches. */
  async start(): Promise<void> {
    const { log, clock, store } = this.options;
    const config = this.config;
    await this.beatEvery();
    await this.parts.recovery.recoverOwn(config.nodeId);
    if (config.replicateOnStartup) await replicateIfFirstOfCluster(store, config, clock, this.parts.offset.current() ?? 0, log);
    this.endWatch = this.parts.watchLocalWrites(() => {
      store.noteLocalWrite();
      this.parts.waker.wake();
    });
    if (config.watchRepositories) {
      // Refusing beats degrading: beyond the limit this throws and the node does not start.
      const { spoolDir } = this.options;
      const saved = spoolDir === undefined ? {} : { saved: new SavedRefSnapshots(join(spoolDir, REF_SNAPSHOTS_DIR)) };
      this.refWatcher = new RefWatcher({ config: () => this.config, store, log, ...saved });
      await this.refWatcher.start();
    }
    await this.parts.configs.reloadIfChanged();
  }

  /**
   * One pass: heartbeat, stale-lock observation and store sweeps when due, the periodic verify,
   * the spool, then the distributor. `woke` is why the sleep before it ended: after a freed push
   * slot the last listing is reused when it is less than an interval old.
   */
  async tick(woke: WakeReason = 'other'): Promise<PassOutcome> {
    const { log, clock, drain } = this.options;
    const { distributor, configs } = this.parts;
    const now = clock.monotonic();
    await configs.reloadIfChanged();
    const config = this.config;
    await this.beatEvery();
    await this.observeEvery();
    await this.membershipEvery();
    let nextDueAt: number | undefined;
    let pendingUris = 1;
    let fresh = false;
    if (woke !== 'slot' || now - this.periodFrom >= passEveryMs(config)) this.periodFrom = now;
    try {
      await this.sweepEvery();
      if (!drain) this.parts.verify.maybeRun();
      // Before the listing, so a drain sees what it forwarded.
      await this.forwardSpool();
      // A freed slot asks for the next push at once; the listing it needs is at most one
      // interval old, as it would be on the periodic pass.
      const reuseListing = woke === 'slot' && now - this.listedAt < config.distributionIntervalMs;
      if (!reuseListing) this.listedAt = now;
      // A drain ends on what waiting/ holds now, never on a listing kept for another writer's sake.
      const report = await distributor.tick({ reuseListing, unreadChangesMayWaitMs: drain ? 0 : unreadChangesMayWaitMs(config) });
      fresh = !reuseListing;
      // Idle: nothing pushing, nothing started, nothing due within DONE_SWEEP_QUIET_MS.
      const idle =
        distributor.runningCount === 0 && report.started === 0 && (report.nextDueAt === undefined || report.nextDueAt - clock.now() >= DONE_SWEEP_QUIET_MS);
      this.parts.doneSweeper.maybeSweep(idle);
      nextDueAt = report.nextDueAt;
      pendingUris = report.pendingUris;
      if (this.lastPassAt === undefined)
        log.info({ pendingUris, started: report.started, ms: Math.round(clock.monotonic() - now) }, 'first pass over the queue done');
      // A node that starts on a big backlog reads one task per waiting folder over several passes.
      this.unlearned = report.unlearned;
      if (report.unlearned === 0 && !this.queueLearned) {
        this.queueLearned = true;
        log.info({ pendingUris, ms: Math.round(clock.monotonic() - this.startedAt) }, 'every waiting folder learned');
      }
      this.lastPassAt = clock.monotonic();
      reportStoreWorks(distributor.storeOutage, log, 'pass');
    } catch (error) {
      // A store outage (full disk, unmounted share) must not stop the node: log, try next pass.
      reportPassFailure(distributor.storeOutage, log, error);
    }
    if (drain && pendingUris === 0 && distributor.runningCount === 0 && this.spooledTasks === 0) return fresh ? 'drained' : 'list-again';
    // Counted from the start of the last periodic pass: a slow pass does not stretch the period.
    let waitMs = Math.max(0, Math.min(passEveryMs(config), this.periodFrom + passEveryMs(config) - clock.monotonic()));
    if (nextDueAt !== undefined) waitMs = Math.min(waitMs, Math.max(0, nextDueAt - clock.now()));
    // Spooled updates go into the store within a second of it taking writes again.
    if (this.spooledTasks > 0) waitMs = Math.min(waitMs, SPOOL_RETRY_MS);
    return waitMs;
  }

  /**
   * Stops taking work, lets running pushes finish for shutdownGrace and aborts the rest, then
   * leaves a stopped heartbeat. Resolves with the exit code: 1 when a drain left failed tasks.
   */
  private async stop(): Promise<number> {
    const { log, shutdownGraceMs, timers } = this.options;
    const { distributor } = this.parts;
    this.endWatch?.();
    await this.refWatcher?.stop();
    distributor.stopAccepting();
    if (distributor.runningCount > 0) {
      log.info({ running: distributor.runningCount, graceMs: shutdownGraceMs }, 'waiting for running pushes');
      let cancelGrace = (): void => undefined;
      const graceOver = new Promise<'timeout'>((resolve) => {
        cancelGrace = timers.after(shutdownGraceMs, () => resolve('timeout'));
      });
      const ended = await Promise.race([distributor.whenIdle().then(() => 'idle' as const), graceOver]);
      cancelGrace();
      if (ended === 'timeout') {
        log.warn({ running: distributor.runningCount }, 'shutdown grace over: aborting running pushes');
        distributor.abortAll();
        await distributor.whenIdle();
      }
    }
    // What the last pushes retired goes now, so a stopped node leaves nothing behind.
    await this.parts.doneSweeper.finish();
    await this.beat(true);
    const failed = distributor.failedCount;
    log.info({ nodeId: this.config.nodeId, failedTasks: failed, takeovers: this.parts.recovery.takeoverCount }, 'refrelay node stopped');
    return this.options.drain && failed > 0 ? 1 : 0;
  }

  /** A store that fails here fails the pass's listing too; the spool stays for the next pass. */
  private async forwardSpool(): Promise<void> {
    await this.parts.spool
      ?.tick()
      .catch((error: unknown) => reportSpoolFailure(this.parts.distributor.storeOutage, this.options.log, error, this.spooledTasks));
  }

  private async measureOffset(): Promise<void> {
    try {
      const current = this.parts.offset.add(await this.parts.probeClock());
      const limit = this.config.lockStaleMs / 4;
      if (Math.abs(current) > limit) {
        this.options.log.warn({ clockOffsetMs: current, limitMs: limit }, "this node's clock is far from the store's clock: run NTP");
      }
    } catch (error) {
      this.options.log.warn({ err: String(error) }, 'could not measure the store clock offset');
    }
  }

  private async beat(stopped = false): Promise<void> {
    const { distributor, offset } = this.parts;
    const outage = distributor.storeOutage;
    // What this node's jobs and passes meet shows in `status` on every node, when the record itself can be written.
    await this.parts.heartbeat
      .beat(distributor.runningUris(), offset.current() ?? null, stopped, distributor.openCircuits(), outage.view('heartbeat'), this.spooledTasks)
      .then(
        () => {
          this.heartbeatError = undefined;
          reportStoreWorks(outage, this.options.log, 'heartbeat');
        },
        (error: unknown) => {
          this.heartbeatError = error instanceof Error ? error.message : String(error);
          reportHeartbeatFailure(outage, this.options.log, error);
        },
      );
    await this.options.observability
      ?.afterBeat()
      .catch((error: unknown) => this.options.log.warn({ err: String(error) }, "could not write this node's history file"));
  }

  /** Healthy: the loop runs, the store takes writes, the clock is close to the store's (node-health.ts). */
  health(): Health {
    return nodeHealth({
      config: this.config,
      stopping: this.stopping,
      now: this.options.clock.monotonic(),
      lastPassAt: this.lastPassAt,
      storeOutage: this.parts.distributor.storeOutage.view(),
      heartbeatError: this.heartbeatError,
      clockOffsetMs: this.parts.offset.current(),
      spoolProblem: this.parts.spool?.problem(),
    });
  }
}
