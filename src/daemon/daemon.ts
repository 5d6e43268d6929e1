import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { ClockOffsetTracker, measureStoreClockOffset } from '../cluster/clock-probe.js';
import { NodeHeartbeat } from '../cluster/node-heartbeat.js';
import { assertNodeIdFree } from '../cluster/node-identity.js';
import { changedConfigFiles, readConfigStamp, type ConfigStamp } from '../config/config-stamp.js';
import type { Credentials } from '../config/secure-config.js';
import type { ReplicationConfig } from '../config/types.js';
import { UriLocks } from '../lock/uri-lock.js';
import type { EventSink } from '../observe/events.js';
import type { Health, NodeSchedule } from '../observe/http-server.js';
import type { Log } from '../observe/log.js';
import type { Pusher } from '../push/git-pusher.js';
import { RefWatcher } from '../intake/ref-watcher.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { planFullSync } from '../intake/replicate.js';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import type { Timers } from '../runtime/timers.js';
import { Waker, type WakeReason } from '../runtime/waker.js';
import { Distributor } from '../schedule/distributor.js';
import type { TaskStore } from '../store/task-store.js';
import { LockRecovery, realProcessControl, type ProcessControl } from './lock-recovery.js';
import { PeriodicVerify } from './periodic-verify.js';
import { reportHeartbeatFailure, reportPassFailure, reportSpoolFailure, reportStoreWorks, storeHealthReason } from './store-failure-reports.js';
import { DONE_SWEEP_QUIET_MS, DoneSweeper } from './done-sweeper.js';
import { sweepDroppedTasks } from './dropped-sweep.js';
import { HeldLocks } from './held-locks.js';
import { SpoolForwarder } from './spool-forwarder.js';

/** A burst of local store writes (new tasks above all) becomes one early distributor pass. */
const WATCH_HINT_DEBOUNCE_MS = 50;
/** Temp files older than this in building/ were left by a crash. */
const BUILDING_MAX_AGE_MS = 60 * 60 * 1000;
const SWEEP_EVERY_MS = 5 * 60 * 1000;
/** While the local spool holds tasks the store did not take yet, passes come at least this often. */
const SPOOL_RETRY_MS = 1000;

export interface DaemonOptions {
  readonly config: ReplicationConfig;
  readonly store: TaskStore;
  readonly pusher: Pusher;
  readonly clock: Clock;
  readonly random: Random;
  readonly timers: Timers;
  readonly log: Log;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  /** Exit once nothing is left that this node may take. */
  readonly drain: boolean;
  readonly shutdownGraceMs: number;
  readonly processes?: ProcessControl;
  /** HTTP(S) credentials from secure.config, read once at start (pushes get them from the pusher). */
  readonly credentials?: Credentials;
  /** Reads the config file again (SIGHUP, autoReload); throws ConfigError when it is invalid. */
  readonly reloadConfig?: () => ReplicationConfig;
  /** This store's folder in the local spool, whose tasks the node forwards into the store. */
  readonly spoolDir?: string;
  /** Metrics, history and the HTTP endpoints; absent in tests that need none. */
  readonly observability?: DaemonObservability;
}

/** What the observability side reads off a running node. */
export interface DaemonView {
  readonly config: () => ReplicationConfig;
  readonly health: () => Health;
  readonly schedule: () => NodeSchedule;
  /** Store clock minus local clock (ms), 0 before the first measurement. */
  readonly storeClockOffsetMs: () => number;
  /** Tasks in this machine's spool for the store, not forwarded yet. */
  readonly spooledTasks: () => number;
}

export interface DaemonObservability {
  readonly events: EventSink;
  /** After the node id check, before the first pass; a failure stops the node (e.g. port taken). */
  start(view: DaemonView): Promise<void>;
  /** After each node heartbeat (every distributionInterval). */
  afterBeat(): Promise<void>;
  stop(): Promise<void>;
}

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
  /** The config in force: replaced by a valid reload, read afresh by every pass and push. */
  private config: ReplicationConfig;
  private configStamp: ConfigStamp | undefined;
  private readonly periodicVerify: PeriodicVerify;
  private readonly doneSweeper: DoneSweeper;
  private readonly spool: SpoolForwarder | undefined;
  /** Monotonic time of the last completed distributor pass, and of the last heartbeat outcome. */
  private lastPassAt: number | undefined;
  private heartbeatError: string | undefined;

  constructor(private readonly options: DaemonOptions) {
    this.doneSweeper = new DoneSweeper(options.store, options.clock, options.log);
    const { config } = options;
    this.config = config;
    this.locks = new UriLocks({
      runningDir: join(config.storePath, 'ref-updates', 'running'),
      nodeId: config.nodeId,
      host: options.host,
      pid: options.pid,
      clock: options.clock,
      random: options.random,
      trustMs: () => this.config.lockStaleMs / 3,
    });
    this.heldLocks = new HeldLocks(this.locks, options.store, options.clock, () => this.doneSweeper.retired());
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
    this.recovery = new LockRecovery(this.locks, options.store, options.clock, options.log, options.host, processes, () => this.config.lockStaleMs, (uriKey) => {
      this.distributor.expedite(uriKey);
      this.waker.wake();
    }, options.observability?.events);
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

  /**
   * Apply the config file as it is now. A valid one takes effect for the next pass and the next
   * push (new remotes start, removed remotes stop being scheduled); running pushes finish with the
   * settings they started with and no claim is touched. An invalid one is refused with the same
   * messages as `config check`, and the old config stays in force.
   */
  reload(reason: string, files?: readonly string[]): boolean {
    const { log, reloadConfig } = this.options;
    if (reloadConfig === undefined) return false;
    let next: ReplicationConfig;
    try {
      next = reloadConfig();
    } catch (error) {
      const problems = (error as { problems?: Array<{ file: string; key: string; message: string }> }).problems;
      log.error(
        { reason, problems: problems?.map((problem) => `${problem.file}: ${problem.key}: ${problem.message}`) ?? [String(error)] },
        'config reload refused: the file is invalid; the previous config stays in force',
      );
      return false;
    }
    const fixed = (['storePath', 'nodeId'] as const).filter((key) => next[key] !== this.config[key]);
    if (fixed.length > 0) {
      log.error({ reason, keys: fixed }, 'config reload refused: storePath and nodeId only change with a restart');
      return false;
    }
    const before = new Set(this.config.remotes.map((remote) => remote.name));
    const after = new Set(next.remotes.map((remote) => remote.name));
    this.config = next;
    log.info(
      { reason, ...(files === undefined ? {} : { files }), added: [...after].filter((name) => !before.has(name)), removed: [...before].filter((name) => !after.has(name)) },
      'config reloaded',
    );
    this.waker.wake();
    return true;
  }

  /**
   * replicateOnStartup: a full sync of every project, queued only by the first daemon of the
   * cluster — when no other node's heartbeat is fresh on the store's clock. Two nodes starting at
   * once may both queue it; the tasks are the same files, so that costs nothing.
   */
  private async replicateIfFirstOfCluster(): Promise<void> {
    const { store, clock, log } = this.options;
    const config = this.config;
    const storeNow = clock.now() + (this.offset.current() ?? 0);
    const freshWithin = 3 * config.distributionIntervalMs + config.lockStaleMs;
    const peers = (await store.readNodeRecordFiles()).filter((file) => {
      const record = file.record as { nodeId?: unknown; stoppedAt?: unknown } | null;
      return record !== null && record.nodeId !== config.nodeId && typeof record.stoppedAt !== 'number' && storeNow - file.mtimeMs <= freshWithin;
    });
    if (peers.length > 0 || config.basePath === undefined) {
      log.info({ aliveNodes: peers.length }, 'replicateOnStartup: another node is running; not queueing a full sync');
      return;
    }
    const projects = await discoverProjects(config.basePath);
    const tasks = planFullSync(config, projects, { patterns: [], all: true, remotes: [], urlSubstring: undefined });
    await store.createMany(tasks);
    log.info({ projects: projects.length, tasks: tasks.length }, 'replicateOnStartup: first node of the cluster queued a full sync');
  }

  /** With autoReload, a few stats per pass notice an edited config file or fan-out folder. */
  private async reloadIfChanged(): Promise<void> {
    if (!this.config.autoReload) return;
    const stamp = await readConfigStamp(this.config.file);
    if (stamp === undefined) return;
    const before = this.configStamp;
    this.configStamp = stamp;
    const files = before === undefined ? [] : changedConfigFiles(before, stamp);
    if (files.length > 0) this.reload('config file changed', files);
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
    if (config.replicateOnStartup) await this.replicateIfFirstOfCluster();
    this.watchLocalWrites();
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
    await this.reloadIfChanged();
    while (!this.stopping) {
      const config = this.config;
      const now = clock.monotonic();
      await this.reloadIfChanged();
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
          const swept = await this.options.store.sweepBuilding(BUILDING_MAX_AGE_MS);
          if (swept > 0) log.info({ files: swept }, 'swept temp files left in building/');
          await sweepDroppedTasks(this.options.store, config.retentionMs, log);
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

  /**
   * Healthy: the distributor loop runs, the store took the last heartbeat write, and this
   * node's clock is within lockStale / 4 of the store's.
   */
  health(): Health {
    const config = this.config;
    const reasons: string[] = [];
    const passEvery = Math.min(config.distributionIntervalMs, config.lockStaleMs / 6);
    const sincePass = this.lastPassAt === undefined ? undefined : this.options.clock.monotonic() - this.lastPassAt;
    if (this.stopping) reasons.push('the node is stopping');
    if (sincePass === undefined) reasons.push('the node is starting: no distributor pass yet');
    else if (sincePass > 3 * passEvery + 5000) reasons.push(`the distributor loop has not completed a pass for ${Math.round(sincePass / 1000)} s`);
    const storeReason = storeHealthReason(this.distributor.storeOutage.view());
    if (storeReason !== undefined) reasons.push(storeReason);
    else if (this.heartbeatError !== undefined) reasons.push(`the node heartbeat could not be written: ${this.heartbeatError}`);
    const offset = this.offset.current();
    if (offset !== undefined && Math.abs(offset) > config.lockStaleMs / 4) {
      reasons.push(`this node's clock is ${Math.round(offset / 1000)} s off the store's clock (limit ${Math.round(config.lockStaleMs / 4000)} s): run NTP`);
    }
    const spoolProblem = this.spool?.problem();
    if (spoolProblem !== undefined) reasons.push(spoolProblem);
    return { ok: reasons.length === 0, reasons };
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

  /**
   * A local hint only: other nodes' writes arrive through the periodic listing. The watch is on
   * building/, where every task written on this machine starts (temp, then link into waiting/) —
   * as do the store's other atomic writes (retry state, failure reasons), rare enough to wake a
   * pass too — not on waiting/: there every claim and reset is an event, and while this node pushed
   * each of them woke a pass that listed the whole folder again (a listing of 100,000 waiting
   * tasks costs ~100 ms) instead of one per interval. The last event of a write, the temp's
   * removal, comes after the task is in waiting/.
   */
  private watchLocalWrites(): void {
    const dir = join(this.config.storePath, 'ref-updates', 'building');
    try {
      let hinted = false;
      this.watcher = watch(dir, { persistent: false }, () => {
        if (hinted) return;
        hinted = true;
        setTimeout(() => {
          hinted = false;
          this.waker.wake();
        }, WATCH_HINT_DEBOUNCE_MS).unref();
      });
      this.watcher.on('error', () => undefined);
    } catch {
      this.watcher = undefined;
    }
  }
}
