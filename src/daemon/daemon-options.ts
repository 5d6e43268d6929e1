import type { WaitingUri } from '../schedule/waiting-uris.js';
import type { Credentials } from '../config/secure-config.js';
import type { ReplicationConfig } from '../config/types.js';
import type { EventSink } from '../schedule/events.js';
import type { Health } from '../observe/http-server.js';
import type { NodeSchedule } from '../schedule/schedule-view.js';
import type { Log } from '../runtime/log.js';
import type { Pusher } from '../push/git-pusher.js';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import type { Timers } from '../runtime/timers.js';
import type { TaskStore } from '../store/task-store.js';
import type { LiveNodes } from '../cluster/live-nodes.js';
import type { NodeHeartbeat } from '../cluster/node-heartbeat.js';
import type { HeldLocks } from '../lock/held-locks.js';
import type { SchedulerLocks } from '../schedule/ports.js';
import type { LockRecovery, ProcessControl } from './lock-recovery.js';
import type { PeriodicVerify } from './periodic-verify.js';

// What a Daemon is given and what it shows, apart from the loop so the node's wiring reads alone.

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
  /** Collaborators to use instead of the real ones: fakes in tests. */
  readonly parts?: Partial<NodeCollaborators>;
}

/** The collaborators a test may replace (DaemonOptions.parts); node-parts.ts builds the real ones. */
export interface NodeCollaborators {
  /** The scheduler's locks (lock/held-locks.ts), and which leases this process holds right now. */
  readonly leases: SchedulerLocks & Pick<HeldLocks, 'ownLeases' | 'ownLocks'>;
  readonly heartbeat: Pick<NodeHeartbeat, 'beat'>;
  readonly recovery: Pick<LockRecovery, 'recoverOwn' | 'pass' | 'takeoverCount'>;
  readonly verify: Pick<PeriodicVerify, 'maybeRun'>;
  /** One sample of store clock minus local clock (cluster/clock-probe.ts). */
  readonly probeClock: () => Promise<number>;
  /** Throws when a live daemon already runs with this node id (cluster/node-identity.ts). */
  readonly assertNodeIdFree: () => Promise<void>;
  /** Starts the local write hint (local-write-watch.ts); returns what ends it. */
  readonly watchLocalWrites: (wake: () => void) => () => void;
  /** The live nodes from nodes/ (cluster/live-nodes.ts), for each URI's preferred node. */
  readonly liveNodes: Pick<LiveNodes, 'membership' | 'refresh'>;
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
  /** False while this node's store writes fail (a store outage, or the heartbeat cannot be written). */
  readonly storeWritable: () => boolean;
  /** URIs this node is pushing right now (its push jobs). */
  readonly runningPushes: () => number;
  /** The waiting tasks per URI as the last pass listed them; undefined before the first pass. */
  readonly waitingUris: () => Iterable<WaitingUri> | undefined;
  /** How many records waitingUris yields; undefined before the first pass. */
  readonly waitingUriCount: () => number | undefined;
  /** The oldest waiting task's age per remote (local clock `now`), as the last pass listed them; undefined before the first pass. */
  readonly oldestWaitingByRemote: (now: number) => ReadonlyMap<string, number> | undefined;
  /** True once the node has read every waiting folder it has seen (its counts then cover the queue). */
  readonly queueLearned: () => boolean;
}

export interface DaemonObservability {
  readonly events: EventSink;
  /** After the node id check, before the first pass; a failure stops the node (e.g. port taken). */
  start(view: DaemonView): Promise<void>;
  /** After each node heartbeat (every distributionInterval). */
  afterBeat(): Promise<void>;
  stop(): Promise<void>;
}
