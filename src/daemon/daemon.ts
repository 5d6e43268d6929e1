import { watch, type FSWatcher } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { NodeHeartbeat } from '../cluster/node-heartbeat.js';
import type { ReplicationConfig } from '../config/types.js';
import { parseOwnerRecord } from '../lock/owner-record.js';
import { UriLocks } from '../lock/uri-lock.js';
import type { Log } from '../observe/log.js';
import type { Pusher } from '../push/git-pusher.js';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import type { Timers } from '../runtime/timers.js';
import { Waker } from '../runtime/waker.js';
import { Distributor } from '../schedule/distributor.js';
import type { TaskStore } from '../store/task-store.js';

/** A burst of local writes to waiting/ becomes one early distributor pass. */
const WATCH_HINT_DEBOUNCE_MS = 50;

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
}

/**
 * One refrelay node: recovers its own earlier claims, then runs the distributor loop until
 * stopped (or, with drain, until no work is left), beating its node heartbeat meanwhile.
 */
export class Daemon {
  private readonly waker = new Waker();
  private readonly distributor: Distributor;
  private readonly locks: UriLocks;
  private readonly heartbeat: NodeHeartbeat;
  private stopping = false;
  private watcher: FSWatcher | undefined;

  constructor(private readonly options: DaemonOptions) {
    const { config } = options;
    const runningDir = join(config.storePath, 'ref-updates', 'running');
    this.locks = new UriLocks({ runningDir, nodeId: config.nodeId, host: options.host, pid: options.pid, clock: options.clock, random: options.random });
    this.heartbeat = new NodeHeartbeat({
      nodesDir: join(config.storePath, 'nodes'),
      nodeId: config.nodeId,
      pid: options.pid,
      host: options.host,
      version: options.version,
      clock: options.clock,
      random: options.random,
    });
    this.distributor = new Distributor(
      {
        config: () => this.options.config,
        store: options.store,
        locks: this.locks,
        pusher: options.pusher,
        clock: options.clock,
        random: options.random,
        timers: options.timers,
        log: options.log,
      },
      () => this.waker.wake(),
    );
  }

  /** Put this node's own earlier claims (same node id, e.g. before a crash) back to waiting. */
  async recoverOwnClaims(): Promise<number> {
    const { store, config, log } = this.options;
    let recovered = 0;
    for (const lock of await store.listRunning()) {
      const owner = parseOwnerRecord(JSON.stringify(lock.ownerRecord ?? null));
      if (owner === undefined || owner.nodeId !== config.nodeId) continue;
      const names = lock.tasks.map((item) => item.name);
      await store.reset(lock.lockName, names);
      await this.locks.releaseStale(lock.lockName, owner.leaseId);
      recovered += names.length;
      log.info({ lock: lock.lockName, tasks: names.length, formerPid: owner.pid }, 'recovered own earlier claim');
    }
    return recovered;
  }

  requestStop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.distributor.stopAccepting();
    this.waker.wake();
  }

  /** Runs until stopped or drained. Resolves with the exit code. */
  async run(): Promise<number> {
    const { config, log, clock } = this.options;
    log.info({ nodeId: config.nodeId, pid: this.options.pid, store: config.storePath, drain: this.options.drain }, 'refrelay node starting');
    await this.recoverOwnClaims();
    this.watchWaiting();
    let lastBeat = -Infinity;
    while (!this.stopping) {
      if (clock.now() - lastBeat >= config.distributionIntervalMs) {
        lastBeat = clock.now();
        await this.heartbeat.beat(this.distributor.runningUris(), null).catch((error: unknown) => log.warn({ err: String(error) }, 'node heartbeat write failed'));
      }
      let nextDueAt: number | undefined;
      let pendingUris = 1;
      try {
        const report = await this.distributor.tick();
        nextDueAt = report.nextDueAt;
        pendingUris = report.pendingUris;
      } catch (error) {
        // A store outage must not stop the node: log it and try again next pass.
        log.error({ err: error instanceof Error ? error.message : String(error) }, 'distributor pass failed');
      }
      if (this.options.drain && pendingUris === 0 && this.distributor.runningCount === 0) break;
      let waitMs = config.distributionIntervalMs;
      if (nextDueAt !== undefined) waitMs = Math.min(waitMs, Math.max(0, nextDueAt - clock.now()));
      await this.waker.wait(waitMs);
    }
    await this.shutdown();
    const failed = this.distributor.failedCount;
    log.info({ nodeId: config.nodeId, failedTasks: failed }, 'refrelay node stopped');
    return this.options.drain && failed > 0 ? 1 : 0;
  }

  private async shutdown(): Promise<void> {
    this.watcher?.close();
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
    await this.heartbeat.beat([], null).catch(() => undefined);
  }

  /** A local hint only: other nodes' writes arrive through the periodic listing. */
  private watchWaiting(): void {
    const dir = join(this.options.config.storePath, 'ref-updates', 'waiting');
    try {
      mkdirSync(dir, { recursive: true });
      // Claims and finishes fire events too: coalesce a burst into one early pass.
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
