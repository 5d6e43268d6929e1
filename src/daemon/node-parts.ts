import { ClockOffsetTracker, measureStoreClockOffset } from '../cluster/clock-probe.js';
import { LiveNodes, nodeAliveWithinMs } from '../cluster/live-nodes.js';
import { NodeHeartbeat } from '../cluster/node-heartbeat.js';
import { assertNodeIdFree } from '../cluster/node-identity.js';
import { HeldLocks } from '../lock/held-locks.js';
import { UriLocks } from '../lock/uri-lock.js';
import { spoolTasks } from '../intake/spool.js';
import { Waker } from '../runtime/waker.js';
import { Distributor } from '../schedule/distributor.js';
import type { SchedulerLocks } from '../schedule/ports.js';
import type { Task } from '../task/task.js';
import type { ReplicationConfig } from '../config/types.js';
import { ConfigReloader } from './config-reload.js';
import type { DaemonOptions, NodeCollaborators } from './daemon-options.js';
import { DoneSweeper } from './done-sweeper.js';
import { watchLocalWrites } from './local-write-watch.js';
import { LockRecovery, realProcessControl, type ProcessControl } from './lock-recovery.js';
import { PeriodicVerify } from './periodic-verify.js';
import { SpoolForwarder } from './spool-forwarder.js';

/** What a Daemon works with. */
export type DaemonParts = ReturnType<typeof nodeParts>;

/**
 * The collaborators of one node, wired to each other: what `options.parts` gives (fakes in
 * tests), the real ones for the rest. Time reaches every one through the options' clock and
 * timers, store paths through the store's StorePaths.
 */
export function nodeParts(options: DaemonOptions) {
  const given = options.parts ?? {};
  const { store, clock, random, timers, log, host, pid } = options;
  const { nodeId } = options.config;
  const paths = store.paths;
  const waker = new Waker(timers);
  const configs = new ConfigReloader(options.config, log, options.reloadConfig, () => waker.wake());
  const config = () => configs.current;
  const processes = options.processes ?? realProcessControl;
  const offset = new ClockOffsetTracker();
  const storeClockOffsetMs = (): number => offset.current() ?? 0;
  const doneSweeper = new DoneSweeper(store, clock, log);
  const aliveWithinMs = (): number => nodeAliveWithinMs(config());
  const liveNodes = given.liveNodes ?? new LiveNodes({ nodesDir: paths.nodes, nodeId, clock, storeClockOffsetMs, aliveWithinMs });
  const locks = new UriLocks({ runningDir: paths.running, nodeId, host, pid, clock, random, trustMs: () => config().lockStaleMs / 3 });
  const leases =
    given.leases ??
    new HeldLocks(
      locks,
      (lockName, leaseId) => paths.doneFolder(lockName, leaseId),
      (folder) => paths.waitingFolder(folder),
      clock,
      () => doneSweeper.retired(),
    );
  const distributor = newDistributor(options, { config, locks: leases, storeClockOffsetMs, liveNodes, processes }, () => waker.wake('slot'));
  const onRecovered = (uriKey: string): void => {
    distributor.expedite(uriKey);
    waker.wake();
  };
  const events = options.observability?.events;
  const recovery: NodeCollaborators['recovery'] =
    given.recovery ?? new LockRecovery({ locks, store, clock, log, host, processes, lockStaleMs: () => config().lockStaleMs, onRecovered, events });
  const collaborators: NodeCollaborators = {
    leases,
    recovery,
    heartbeat: given.heartbeat ?? new NodeHeartbeat({ nodesDir: paths.nodes, nodeId, pid, host, version: options.version, clock, random }),
    verify: given.verify ?? new PeriodicVerify(paths.verify, config, clock, random, log, storeClockOffsetMs, options.credentials),
    probeClock: given.probeClock ?? (() => measureStoreClockOffset(paths.nodes, nodeId, clock)),
    assertNodeIdFree: given.assertNodeIdFree ?? (() => waitUntilNodeIdFree(options, config, processes)),
    watchLocalWrites: given.watchLocalWrites ?? ((wake) => watchLocalWrites(paths.building, wake)),
    liveNodes,
  };
  return {
    ...collaborators,
    configs,
    waker,
    distributor,
    doneSweeper,
    offset,
    spool: options.spoolDir === undefined ? undefined : new SpoolForwarder({ dir: options.spoolDir, store, log, storeClockOffsetMs }),
  };
}

interface DistributorWiring {
  readonly config: () => ReplicationConfig;
  /** Where the lock's HeldLease meets the scheduler's Lease: the compiler checks they agree here. */
  readonly locks: SchedulerLocks;
  readonly storeClockOffsetMs: () => number;
  readonly liveNodes: Pick<LiveNodes, 'membership'>;
  readonly processes: ProcessControl;
}

function newDistributor(options: DaemonOptions, wiring: DistributorWiring, onSlotFree: () => void): Distributor {
  const { store, clock, random, timers, log, spoolDir } = options;
  const { config, processes, liveNodes } = wiring;
  const events = options.observability?.events;
  return new Distributor(
    {
      config,
      store,
      locks: wiring.locks,
      pusher: options.pusher,
      clock,
      random,
      timers,
      log,
      storeClockOffsetMs: wiring.storeClockOffsetMs,
      membership: () => liveNodes.membership,
      ...(events ? { events } : {}),
      identifyPush: (pushPid: number) => ({ pushStartTime: processes.identify(pushPid).startTime, bootId: processes.bootId() }),
      ...(spoolDir === undefined ? {} : { spool: (tasks: readonly Task[]) => spoolTasks(spoolDir, config().storePath, tasks, new Date(clock.now())) }),
    },
    onSlotFree,
  );
}

/** Refuses to start while a live process still beats as this node's id (watched for two distribution intervals). */
function waitUntilNodeIdFree(options: DaemonOptions, config: () => ReplicationConfig, processes: ProcessControl): Promise<void> {
  const { store, clock, timers, host, pid } = options;
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => timers.after(ms, resolve));
  const observeMs = 2 * config().distributionIntervalMs + 500;
  const isPidAlive = (alive: number) => processes.isAlive(alive);
  return assertNodeIdFree({ nodesDir: store.paths.nodes, nodeId: options.config.nodeId, host, pid, clock, observeMs, isPidAlive, sleep });
}
