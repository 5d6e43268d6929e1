import type { Clock } from '../runtime/clock.js';
import type { OwnerRecord } from './owner-record.js';
import { ownerSignature, type UriLocks } from './uri-lock.js';

export interface StaleLock {
  readonly lockName: string;
  readonly signature: string;
  readonly owner: OwnerRecord | undefined;
  readonly unchangedMs: number;
}

interface Sighting {
  signature: string;
  owner: OwnerRecord | undefined;
  /** Observer's monotonic time just after the read that first saw this signature. */
  since: number;
}

/**
 * Judges staleness the only way clock skew cannot fool: a lock is stale when its owner record's
 * heartbeat counter has not changed for `staleMs` of this observer's own monotonic clock. The
 * record is read with open/read, never judged by `stat` mtimes (network filesystems cache them).
 * A lock folder without a record (its holder died between mkdir and writing it) is judged the
 * same way. Tombstones left by a crashed breaker age the same way too.
 */
export class LockObserver {
  private readonly locks = new Map<string, Sighting>();
  private readonly tombstones = new Map<string, number>();

  constructor(
    private readonly uriLocks: UriLocks,
    private readonly clock: Clock,
    private readonly staleMs: () => number,
  ) {}

  /**
   * One look at running/. `ownLeases` are locks this process holds right now: never stale.
   * `ownLocks`, their lock names, are not even read: on a busy node they are most of running/,
   * and a peer's lock of the same name can only exist once ours is lost, which our own next
   * heartbeat finds (after that the name is looked at again).
   */
  async scan(ownLeases: ReadonlySet<string>, ownLocks: ReadonlySet<string> = new Set()): Promise<{ stale: StaleLock[]; abandonedTombstones: string[] }> {
    // Each sighting is stamped after its look and compared with a time before the next look, so
    // a slow scan can only make a lock look fresher than it is, never staler.
    const listedFrom = this.clock.monotonic();
    const { locks, tombstones } = await this.uriLocks.listEntries();
    const listedAt = this.clock.monotonic();
    const stale: StaleLock[] = [];
    const present = new Set(locks);
    for (const name of this.locks.keys()) if (!present.has(name)) this.locks.delete(name);
    for (const lockName of locks) {
      if (ownLocks.has(lockName)) {
        this.locks.delete(lockName);
        continue;
      }
      const readFrom = this.clock.monotonic();
      const owner = await this.uriLocks.readOwner(lockName);
      if (owner !== undefined && ownLeases.has(owner.leaseId)) {
        this.locks.delete(lockName);
        continue;
      }
      const signature = ownerSignature(owner);
      const seen = this.locks.get(lockName);
      if (seen === undefined || seen.signature !== signature) {
        this.locks.set(lockName, { signature, owner, since: this.clock.monotonic() });
        continue;
      }
      const unchangedMs = readFrom - seen.since;
      if (unchangedMs >= this.staleMs()) stale.push({ lockName, signature, owner, unchangedMs });
    }
    const presentTombs = new Set(tombstones);
    for (const name of this.tombstones.keys()) if (!presentTombs.has(name)) this.tombstones.delete(name);
    const abandonedTombstones: string[] = [];
    for (const name of tombstones) {
      const since = this.tombstones.get(name);
      if (since === undefined) this.tombstones.set(name, listedAt);
      else if (listedFrom - since >= this.staleMs()) abandonedTombstones.push(name);
    }
    return { stale, abandonedTombstones };
  }

  /** Forget a lock after acting on it, so the next sighting starts a fresh observation. */
  forget(lockName: string): void {
    this.locks.delete(lockName);
    this.tombstones.delete(lockName);
  }
}
