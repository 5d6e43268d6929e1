import type { FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { ClockOffsetTracker, measureStoreClockOffset } from '../cluster/clock-probe.js';
import { NodeHeartbeat } from '../cluster/node-heartbeat.js';
import { assertNodeIdFree } from '../cluster/node-identity.js';
import type { ReplicationConfig } from '../config/types.js';
import { UriLocks } from '../lock/uri-lock.js';
import type { Health } from '../observe/http-server.js';
import { RefWatcher } from '../intake/ref-watcher.js';
import { Waker, type WakeReason } from '../runtime/waker.js';
import { Distributor } from '../schedule/distributor.js';
import { LockRecovery, realProcessControl } from './lock-recovery.js';
import { PeriodicVerify } from './periodic-verify.js';
import { reportHeartbeatFailure, reportPassFailure, reportSpoolFailure, reportStoreWorks } from './store-failure-reports.js';
import { DONE_SWEEP_QUIET_MS, DoneSweeper } from './done-sweeper.js';
import { HeldLocks } from '../lock/held-locks.js';
import { SpoolForwarder } from './spool-forwarder.js';
import type { DaemonOptions } from './daemon-options.js';
import { ConfigReloader } from './config-reload.js';
import { watchLocalWrites } from './local-write-watch.js';
import { nodeHealth } from './node-health.js';
import { replicateIfFirstOfCluster } from './startup-replication.js';
import { SWEEP_EVERY_MS, sweepStoreLeftovers } from './store-sweep.js';

/** While the local spool holds tasks the store did not take yet, passes come at least this often. */
const SPOOL_RETRY_MS = 1000;

export type { DaemonObservability, DaemonOptions, DaemonView } from './daemon-options.js';

/**
 * One refrelay node: checks its node id is free, recovers its own earlier claims, then runs the
 * distributor loop until stopped (or, with drain, until no work is left) — beating its node
 * heartbeat, measuring its clock against the store's, and taking over stale locks of dead peers.
 */
export class Daemon {
  private readonly waker = new Waker();
  private readonly distributor: Distributor;
  private readonly locks: UriLocks;
  private readonly heartbeat: NodeHeartbeat;
  private readonly recovery: LockRecovery;
  private readonly offset = new ClockOffsetTracker();
  private readonly heldLocks: HeldLocks;
  private stopping = false;
  private watcher: FSWatcher | undefined;
  private refWatcher: RefWatcher | undefined;
  private readonly configs: ConfigReloader;
  private readonly periodicVerify: PeriodicVerify;
  private readonly doneSweeper: DoneSweeper;
  private readonly spool: SpoolForwarder | undefined;
  /** Monotonic time of the last completed distributor pass, and of the last heartbeat outcome. */
  private lastPassAt: number | undefined;
  private heartbeatError: string | undefined;

  constructor(private readonly options: DaemonOptions) {
    this.doneSweeper = new DoneSweeper(options.store, options.clock, options.log);
    const { config } = options;
    this.configs = new ConfigReloader(config, options.log, options.reloadConfig, () => this.waker.wake());
    this.locks = new UriLocks({
      runningDir: join(config.storePath, 'ref-updates', 'running'),
      nodeId: config.nodeId,
      host: options.host,
      pid: options.pid,
      clock: options.clock,
      random: options.random,
      trustMs: () => this.config.lockStaleMs / 3,
    });
    this.heldLocks = new HeldLocks(this.locks, (lockName, leaseId) => options.store.paths.doneFolder(lockName, leaseId), options.clock, () => this.doneSweeper.retired());
    const processes = options.processes ?? realProcessControl;
    this.heartbeat = new NodeHeartbeat({ nodesDir: this.nodesDir, nodeId: config.nodeId, pid: options.pid, host: options.host, version: options.version, clock: options.clock, random: options.random });
    this.distributor = new Distributor(
      {
        config: () => this.config,
        store: options.store,
        locks: this.heldLocks,
        pusher: options.pusher,
        clock: options.clock,
        random: options.random,
        timers: options.timers,
        log: options.log,
        storeClockOffsetMs: () => this.offset.current() ?? 0,
        ...(options.observability ? { events: options.observability.events } : {}),
        identifyPush: (pid) => ({ pushStartTime: processes.identify(pid).startTime, bootId: processes.bootId() }),
      },
      () => this.waker.wake('slot'),
    );
    this.spool = options.spoolDir === undefined
      ? undefined
      : new SpoolForwarder({ dir: options.spoolDir, store: options.store, log: options.log, storeClockOffsetMs: () => this.offset.current() ?? 0 });
    this.periodicVerify = new PeriodicVerify(() => this.config, options.clock, options.random, options.log, () => this.offset.current() ?? 0, options.credentials);
    this.recovery = new LockRecovery({
      locks: this.locks,
      store: options.store,
      clock: options.clock,
      log: options.log,
      host: options.host,
      processes,
      lockStaleMs: () => this.config.lockStaleMs,
      onRecovered: (uriKey) => {
        this.distributor.expedite(uriKey);
        this.waker.wake();
      },
      events: options.observability?.events,
    });
  }

  /** The config in force: replaced by a valid reload, read afresh by every pass and push. */
  private get config(): ReplicationConfig {
    return this.configs.current;
  }

  private get nodesDir(): string {
    return join(this.config.storePath, 'nodes');
  }

  get takeovers(): number {
    return this.recovery.takeoverCount;
  }

  /** Task files this node's jobs put in failed/ since it started. */
  get failedTasks(): number {
    return this.distributor.failedCount;
  }

  /** Apply the config file as it is now (ConfigReloader.reload): false when it was refused. */
  reload(reason: string, files?: readonly string[]): boolean {
    return this.configs.reload(reason, files);
  }

  requestStop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.distributor.stopAccepting();
    this.waker.wake();
  }

  /** Runs until stopped or drained. Resolves with the exit code. */
  async run(): Promise<number> {
    const { log, clock } = this.options;
    const config = this.config;
    log.info({ nodeId: config.nodeId, pid: this.options.pid, store: config.storePath, drain: this.options.drain }, 'refrelay node starting');
    // Before anything reads or writes there: a path without the store marker is refused.
    await this.options.store.open();
    await assertNodeIdFree({
      nodesDir: this.nodesDir,
      nodeId: config.nodeId,
      host: this.options.host,
      pid: this.options.pid,
      clock,
      observeMs: 2 * config.distributionIntervalMs + 500,
      isPidAlive: (pid) => (this.options.processes ?? realProcessControl).isAlive(pid),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
    const observability = this.options.observability;
    await observability?.start({
      config: () => this.config,
      health: () => this.health(),
      schedule: () => this.distributor.schedule(config.nodeId),
      storeClockOffsetMs: () => this.offset.current() ?? 0,
      spooledTasks: () => this.spooledTasks,
    });
    try {
      return await this.runStarted();
    } finally {
      await observability?.stop();
      await this.options.pusher.close?.().catch((error: unknown) => log.warn({ err: String(error) }, 'could not close shared ssh connections'));
    }
  }

  private async runStarted(): Promise<number> {
    const { log, clock } = this.options;
    const config = this.config;
    await this.measureOffset();
    await this.beat();
    await this.recovery.recoverOwn(config.nodeId);
    if (config.replicateOnStartup) await replicateIfFirstOfCluster(this.options.store, this.config, clock, this.offset.current() ?? 0, log);
    this.watcher = watchLocalWrites(this.config.storePath, () => this.waker.wake());
    if (config.watchRepositories) {
      // Refusing beats degrading: beyond the limit this throws and the node does not start.
      this.refWatcher = new RefWatcher({ config: () => this.config, store: this.options.store, log });
      await this.refWatcher.start();
    }
    let lastBeat = clock.monotonic();
    let lastSweep = -Infinity;
    let lastObserve = -Infinity;
    let beats = 0;
    let listedAt = -Infinity;
    let woke: WakeReason = 'other';
    await this.configs.reloadIfChanged();
    while (!this.stopping) {
      const config = this.config;
      const now = clock.monotonic();
      await this.configs.reloadIfChanged();
      if (now - lastBeat >= config.distributionIntervalMs) {
        lastBeat = now;
        if (++beats % 6 === 0) await this.measureOffset();
        await this.beat();
      }
      let nextDueAt: number | undefined;
      let pendingUris = 1;
      let fresh = false;
      if (now - lastObserve >= Math.min(config.distributionIntervalMs, config.lockStaleMs / 6)) {
        lastObserve = now;
        // Apart from the pass: a lock folder the observer cannot read must not stop the pushes.
        await this.recovery.pass(this.heldLocks.ownLeases, this.heldLocks.ownLocks).catch((error: unknown) => reportPassFailure(this.distributor.storeOutage, log, error));
      }
      try {
        if (now - lastSweep >= SWEEP_EVERY_MS) {
          lastSweep = now;
          await sweepStoreLeftovers(this.options.store, config.retentionMs, log);
        }
        if (!this.options.drain) this.periodicVerify.maybeRun();
        // Before the listing, so a drain sees what it forwarded.
        await this.forwardSpool();
        // A freed slot asks for the next push at once; the listing it needs is at most one
        // interval old, as it would be on the periodic pass.
        const reuseListing = woke === 'slot' && now - listedAt < config.distributionIntervalMs;
        if (!reuseListing) listedAt = now;
        const report = await this.distributor.tick({ reuseListing });
        fresh = !reuseListing;
        // Idle: nothing pushing, nothing started, nothing due within DONE_SWEEP_QUIET_MS.
        const idle = this.distributor.runningCount === 0 && report.started === 0 && (report.nextDueAt === undefined || report.nextDueAt - clock.now() >= DONE_SWEEP_QUIET_MS);
        this.doneSweeper.maybeSweep(idle);
        nextDueAt = report.nextDueAt;
        pendingUris = report.pendingUris;
        this.lastPassAt = clock.monotonic();
        reportStoreWorks(this.distributor.storeOutage, log, 'pass');
      } catch (error) {
        // A store outage (full disk, unmounted share) must not stop the node: log, try next pass.
        reportPassFailure(this.distributor.storeOutage, log, error);
      }
      if (this.options.drain && pendingUris === 0 && this.distributor.runningCount === 0 && this.spooledTasks === 0) {
        if (fresh) break;
        // A reused listing cannot end a drain, but it says the end is near: list afresh now
        // instead of after a whole interval.
        woke = 'other';
        continue;
      }
      let waitMs = Math.min(config.distributionIntervalMs, config.lockStaleMs / 6);
      if (nextDueAt !== undefined) waitMs = Math.min(waitMs, Math.max(0, nextDueAt - clock.now()));
      // Spooled updates go into the store within a second of it taking writes again.
      if (this.spooledTasks > 0) waitMs = Math.min(waitMs, SPOOL_RETRY_MS);
      woke = await this.waker.wait(waitMs);
    }
    await this.shutdown();
    const failed = this.distributor.failedCount;
    log.info({ nodeId: config.nodeId, failedTasks: failed, takeovers: this.takeovers }, 'refrelay node stopped');
    return this.options.drain && failed > 0 ? 1 : 0;
  }

  get spooledTasks(): number {
    return this.spool?.waiting ?? 0;
  }

  /** A store that fails here fails the pass's listing too; the spool stays for the next pass. */
  private async forwardSpool(): Promise<void> {
    await this.spool?.tick().catch((error: unknown) => reportSpoolFailure(this.distributor.storeOutage, this.options.log, error, this.spooledTasks));
  }

  private async measureOffset(): Promise<void> {
    try {
      const sample = await measureStoreClockOffset(this.nodesDir, this.config.nodeId, this.options.clock);
      const current = this.offset.add(sample);
      const limit = this.config.lockStaleMs / 4;
      if (Math.abs(current) > limit) {
        this.options.log.warn({ clockOffsetMs: current, limitMs: limit }, 'this node\'s clock is far from the store\'s clock: run NTP');
      }
    } catch (error) {
      this.options.log.warn({ err: String(error) }, 'could not measure the store clock offset');
    }
  }

  private async beat(stopped = false): Promise<void> {
    const outage = this.distributor.storeOutage;
    // What this node's jobs and passes meet shows in `status` on every node, when the record itself can be written.
    await this.heartbeat.beat(this.distributor.runningUris(), this.offset.current() ?? null, stopped, this.distributor.openCircuits(), outage.view('heartbeat'), this.spooledTasks).then(
      () => {
        this.heartbeatError = undefined;
        reportStoreWorks(outage, this.options.log, 'heartbeat');
      },
      (error: unknown) => {
        this.heartbeatError = error instanceof Error ? error.message : String(error);
        reportHeartbeatFailure(outage, this.options.log, error);
      },
    );
    await this.options.observability?.afterBeat().catch((error: unknown) => this.options.log.warn({ err: String(error) }, 'could not write this node\'s history file'));
  }

  /** Healthy: the loop runs, the store takes writes, the clock is close to the store's (node-health.ts). */
  health(): Health {
    return nodeHealth({
      config: this.config,
      stopping: this.stopping,
      now: this.options.clock.monotonic(),
      lastPassAt: this.lastPassAt,
      storeOutage: this.distributor.storeOutage.view(),
      heartbeatError: this.heartbeatError,
      clockOffsetMs: this.offset.current(),
      spoolProblem: this.spool?.problem(),
    });
  }

  private async shutdown(): Promise<void> {
    this.watcher?.close();
    await this.refWatcher?.stop();
    this.distributor.stopAccepting();
    if (this.distributor.runningCount > 0) {
      const { log, shutdownGraceMs } = this.options;
      log.info({ running: this.distributor.runningCount, graceMs: shutdownGraceMs }, 'waiting for running pushes');
      const graceOver = new Promise<'timeout'>((resolve) => {
        const timer = setTimeout(() => resolve('timeout'), shutdownGraceMs);
        timer.unref();
      });
      if ((await Promise.race([this.distributor.whenIdle().then(() => 'idle' as const), graceOver])) === 'timeout') {
        log.warn({ running: this.distributor.runningCount }, 'shutdown grace over: aborting running pushes');
        this.distributor.abortAll();
        await this.distributor.whenIdle();
      }
    }
    // What the last pushes retired goes now, so a stopped node leaves nothing behind.
    await this.doneSweeper.finish();
    await this.beat(true);
  }
}
