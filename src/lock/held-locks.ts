import type { Clock } from '../runtime/clock.js';
import { errnoName } from '../runtime/errno.js';
import type { HeldLock } from './held-lock.js';
import { OWNER_FILE } from './owner-record.js';
import type { UriLocks } from './uri-lock.js';

/** After the store refused to take a claim folder into done/, pushes finish file by file this long. */
const RETIRE_OFF_AFTER_ERROR_MS = 10 * 60_000;

/**
 * A held lock as a push job uses it, with `retire` finishing the claim in one move to done/.
 * It is the scheduler's `Lease` (schedule/ports.ts) in shape; lock/ sits below schedule/, so the
 * daemon, which hands HeldLocks to the distributor, is where the compiler checks the two agree.
 */
export type HeldLease = Pick<HeldLock, 'leaseId' | 'claimName' | 'lastWriteAt' | 'stillMine' | 'heartbeat' | 'release'> & {
  /** The waiting folder (its name) whose task files the lease folder took in one rename. */
  readonly leasedFolder?: string;
  retire?(pushed: ReadonlySet<string>): Promise<boolean>;
};

/** Locks as the scheduler sees them, remembering which leases this process holds right now. */
export class HeldLocks {
  readonly ownLeases = new Set<string>();
  /** The lock names of ownLeases. */
  readonly ownLocks = new Set<string>();
  private retireOffUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly locks: UriLocks,
    /** Where a retired claim folder goes (StorePaths.doneFolder). */
    private readonly doneFolder: (lockName: string, leaseId: string) => string,
    /** The path of a waiting folder (StorePaths.waitingFolder), for a lease made from one. */
    private readonly waitingFolder: (folder: string) => string,
    private readonly clock: Clock,
    /** A claim folder went to done/: the done/ sweep has one more to delete. */
    private readonly onRetired: () => void,
  ) {}

  /** With `leaseFrom`, the name of the URI's waiting folder to claim in one rename (UriLocks.acquire). */
  async acquire(lockName: string, uri: string, leaseFrom?: string): Promise<HeldLease | undefined> {
    const held = await this.locks.acquire(lockName, uri, leaseFrom === undefined ? undefined : this.waitingFolder(leaseFrom));
    if (held === undefined) return undefined;
    this.ownLeases.add(held.leaseId);
    this.ownLocks.add(lockName);
    const forget = (): void => {
      this.ownLeases.delete(held.leaseId);
      this.ownLocks.delete(lockName);
    };
    const lease: HeldLease = {
      leaseId: held.leaseId,
      claimName: held.claimName,
      ...(held.movedIn ? { leasedFolder: leaseFrom } : {}),
      stillMine: () => held.stillMine(),
      heartbeat: (extra) => held.heartbeat(extra),
      // A getter: the holder's deadline counts from its last successful record write, now.
      get lastWriteAt() {
        return held.lastWriteAt;
      },
      release: async () => {
        try {
          return await held.release();
        } finally {
          forget();
        }
      },
      ...(this.clock.monotonic() < this.retireOffUntil
        ? {}
        : {
            retire: async (pushed: ReadonlySet<string>) => {
              // Only the owner record, dot files (temps, `.nfs*`) and what this push finished.
              const onlyFinished = (entries: readonly string[]): boolean =>
                entries.every((name) => name === OWNER_FILE || name.startsWith('.') || pushed.has(name));
              let retired: boolean;
              try {
                retired = await held.retire(this.doneFolder(lockName, held.leaseId), onlyFinished);
              } catch (error) {
                // The store refused the move (done/ on another filesystem, missing, not
                // writable): finish file by file for a while instead of failing every push.
                // A throw leaves the lock held: the job finishes the files and calls release().
                if (errnoName(error) !== undefined) this.retireOffUntil = this.clock.monotonic() + RETIRE_OFF_AFTER_ERROR_MS;
                throw error;
              }
              forget();
              if (retired) this.onRetired();
              return retired;
            },
          }),
    };
    return lease;
  }
}
