import type { ReplicationConfig } from '../config/types.js';
import type { EventSink } from './events.js';
import type { Log } from '../runtime/log.js';
import type { Pusher } from '../push/git-pusher.js';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import type { Timers } from '../runtime/timers.js';
import type { TaskStore } from '../store/task-store.js';
import type { Task } from '../task/task.js';
import type { Membership } from '../cluster/live-nodes.js';

/** The store operations the scheduler uses; the real TaskStore and test fakes provide them. */
export type SchedulerStore = Pick<
  TaskStore,
  | 'listWaiting'
  | 'createMany'
  | 'claim'
  | 'giveBack'
  | 'reset'
  | 'finish'
  | 'fail'
  | 'parkFailed'
  | 'readUriState'
  | 'writeUriState'
  | 'deleteUriState'
  | 'listUriStateKeys'
> &
  /** Optional: a store that cannot read ahead is claimed from as usual. */
  Partial<Pick<TaskStore, 'readAhead'>>;

/** A held URI lock, as the push job uses it (the real one is lock/HeldLock). */
export interface Lease {
  readonly leaseId: string;
  /** The claim folder (relative to running/) that store moves under this lease use. */
  readonly claimName: string;
  /**
   * The waiting folder (its name) that became the claim folder in one rename: its task files are
   * claimed already (`SchedulerStore.claim` reads them there). Absent when the lease was made empty.
   */
  readonly leasedFolder?: string;
  /**
   * Monotonic time at which the last successful owner-record write began (leases that do not
   * know leave it out; the job then counts from its last successful heartbeat call).
   */
  readonly lastWriteAt?: number;
  /** False once another node has taken the lock over: then nothing more may be written. */
  stillMine(): Promise<boolean>;
  /**
   * Advance the counter (and record the running push's process group, with what identifies that
   * process: its start time and the machine's boot id); false once lost.
   */
  heartbeat(extra?: { pushPid?: number; pushStartTime?: number; bootId?: string }): Promise<boolean>;
  release(): Promise<boolean>;
  /**
   * Optional: release the lock and finish every task still claimed under it in one step (the
   * claim folder moved aside, its files deleted later). Called only when every task this job
   * claimed was pushed (`pushed`) or moved out; the lease checks the folder holds nothing else.
   * False when the lock was no longer ours; throws when the folder holds anything else or the
   * store refused the move, with everything left in place for `finish` and `release`.
   */
  retire?(pushed: ReadonlySet<string>): Promise<boolean>;
}

export interface SchedulerLocks {
  /**
   * The lock, or undefined when another holder has it. `leaseFrom` names the URI's waiting folder
   * to move in as the claim folder (one rename claims all its tasks), when it is there.
   */
  acquire(lockName: string, uri: string, leaseFrom?: string): Promise<Lease | undefined>;
}

/** What push jobs tell the per-host circuit breaker (the distributor's HostCircuits). */
export interface HostHealth {
  /** A push of `uri` reached its host, whatever git then said. */
  reached(uri: string): void;
  /** A push could not connect; true when the host's circuit is open and the URI keeps its retry count. */
  connectionFailed(uri: string, uriKey: string, baseMs: number, message: string): boolean;
  /** False while the URI's host circuit is open (a job that claimed it ahead must not push it), except for its probe. */
  mayPush(uri: string, uriKey: string): boolean;
  /** The host signalled overload; true when the URI keeps its retry count (the host is paced instead). */
  overloaded(uri: string, retryAfterMs?: number): boolean;
}

export interface SchedulerDeps {
  /** A getter, so a reloaded config applies to the next pass and the next push. */
  readonly config: () => ReplicationConfig;
  readonly store: SchedulerStore;
  readonly locks: SchedulerLocks;
  readonly pusher: Pusher;
  readonly clock: Clock;
  readonly random: Random;
  readonly timers: Timers;
  readonly log: Log;
  /** Store clock minus local clock, in ms: task mtimes are the store server's time. */
  readonly storeClockOffsetMs?: () => number;
  /** The live nodes, for each URI's preferred node (preferred-node.ts); without it every node takes every URI when it comes due. */
  readonly membership?: () => Membership;
  /** Claims, pushes, retries and failures as facts, for metrics and the per-URI history. */
  readonly events?: EventSink;
  readonly hosts?: HostHealth;
  /**
   * The start time and boot id of a push process just spawned, recorded with its pid so that a
   * node on this host can later prove a still-running process is that orphaned push. Without it
   * only the pid is recorded, and such a push is never signalled.
   */
  readonly identifyPush?: (pid: number) => { pushStartTime?: number; bootId?: string };
  /**
   * Writes tasks to this node's local spool, from which they are forwarded once the store takes
   * writes again: where a task the job itself must queue goes when the store refuses it.
   */
  readonly spool?: (tasks: readonly Task[]) => Promise<void>;
}
