import { join } from 'node:path';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import { HeldLock } from './held-lock.js';
import { errnoName, isGone, isPathGone } from '../runtime/errno.js';
import { leaseIsAlone, nodeLockFs, readOwnerAt, type LockFs } from './lock-files.js';
import { OWNER_FILE, type OwnerRecord } from './owner-record.js';

export type { LockFs } from './lock-files.js';

export interface UriLocksOptions {
  /** `<store>/ref-updates/running`: each lock is a folder `<lockName>` in it. */
  readonly runningDir: string;
  readonly nodeId: string;
  readonly host: string;
  readonly pid: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly fs?: LockFs;
  /**
   * How long after starting an owner-record write the holder may trust the lock is still its own
   * without reading the record again (0: always read). Observers judge a lock stale only after
   * its counter stayed unchanged for lockStale on their own monotonic clocks, so nobody can have
   * taken it over within a fraction of lockStale of the holder's last write; the daemon uses
   * lockStale / 3 (heartbeats come every lockStale / 6). A paused holder's monotonic clock runs
   * on, so after a pause it reads again.
   */
  readonly trustMs?: () => number;
}

const LOCK_NAME = /^[0-9a-f]{40}$/;
const TOMBSTONE_NAME = /^[0-9a-f]{40}\.tomb\./;

/**
 * Cross-node URI locks: an atomic `mkdir` of `running/<lockName>` wins, and the winner writes an
 * owner record inside it and claims tasks into a folder named after its lease
 * (`running/<lockName>/<leaseId>/`), mostly the URI's waiting folder renamed there. Nothing here
 * trusts file mtimes: holders advance a counter and observers judge staleness by their own
 * monotonic clocks (LockObserver). Breaking a stale
 * lock renames the whole folder to a tombstone — one atomic step only one node can win — so the
 * late holder's paths simply stop existing (fencing by path).
 */
export class UriLocks {
  readonly runningDir: string;
  private readonly fs: LockFs;

  constructor(private readonly options: UriLocksOptions) {
    this.runningDir = options.runningDir;
    this.fs = options.fs ?? nodeLockFs;
  }

  lockDir(lockName: string): string {
    return join(this.runningDir, lockName);
  }

  /**
   * Take the lock, or `undefined` when someone else holds it or took it over while it was being
   * taken (a lost race is not an error). With `leaseFrom` (a URI's waiting folder), that folder is
   * renamed into place as the lease folder, so its tasks are claimed in one step
   * (`HeldLock.movedIn`); when it is not there, the lease folder is made empty.
   */
  async acquire(lockName: string, uri: string, leaseFrom?: string): Promise<HeldLock | undefined> {
    try {
      // running/ is part of the store's layout (made by `refrelay init`) and never made here, so a
      // store that is not mounted fails the lock instead of growing one on the local disk.
      await this.fs.mkdir(this.lockDir(lockName));
    } catch (error) {
      if (errnoName(error) === 'EEXIST') return undefined;
      throw error;
    }
    const now = this.options.clock.now();
    const record: OwnerRecord = {
      version: 1,
      nodeId: this.options.nodeId,
      pid: this.options.pid,
      host: this.options.host,
      leaseId: `${this.options.nodeId}.${this.options.random.token()}`,
      counter: 0,
      uri,
      acquiredAt: now,
      heartbeatAt: now,
    };
    const leaseDir = join(this.lockDir(lockName), record.leaseId);
    let movedIn = false;
    let held: HeldLock;
    try {
      movedIn = leaseFrom !== undefined && (await this.moveInLease(leaseFrom, leaseDir));
      if (!movedIn) await this.fs.mkdir(leaseDir);
      held = new HeldLock(this.fs, this.lockDir(lockName), lockName, record, this.options.clock, this.options.random, this.options.trustMs, movedIn);
      await held.writeRecord(record);
    } catch (error) {
      // The folder vanished before the record was written: a peer broke this ownerless lock as
      // stale (this node was paused past lockStale in between) and renamed it away. The lock was
      // lost, as a refused one is; whatever stands at its path now is the peer's, not ours to remove.
      if (isPathGone(error)) return undefined;
      // Without an owner record nobody could tell whose lock this is: give it back at once.
      await this.giveBack(leaseDir, movedIn ? leaseFrom : undefined);
      await this.fs.rmdir(this.lockDir(lockName)).catch(() => undefined);
      throw error;
    }
    if (!(await leaseIsAlone(this.fs, this.lockDir(lockName), record.leaseId))) {
      // Another node's lease shares the folder: whichever of the two checks second sees both and
      // backs off, so at most one holds. If both back off, the folder is left ownerless and is
      // taken over after lockStale, a delay and never a second holder. Only our own lease goes.
      await this.giveBack(leaseDir, movedIn ? leaseFrom : undefined);
      return undefined;
    }
    return held;
  }

  /**
   * `rename leaseFrom → leaseDir`: true when a real folder moved in. Nothing there (claimed by a
   * peer, or never made) or a rename the store refuses is false: the lease is made empty and the
   * claim takes the tasks one by one. Anything else under that name, a symlink above all (the
   * owner record would be written through it), is put back where it was.
   */
  private async moveInLease(leaseFrom: string, leaseDir: string): Promise<boolean> {
    if (!(await this.renameQuietly(leaseFrom, leaseDir))) return false;
    if ((await this.fs.lstat(leaseDir)).isDirectory()) return true;
    await this.fs.rename(leaseDir, leaseFrom);
    return false;
  }

  /**
   * Undo a lease that does not hold: the owner record goes, and a lease folder that was a waiting
   * folder goes back to where it was (a folder made there meanwhile keeps it here, for the
   * takeover of the ownerless lock to put its tasks back); an empty one is removed.
   */
  private async giveBack(leaseDir: string, leaseFrom: string | undefined): Promise<void> {
    await this.fs.unlink(join(leaseDir, OWNER_FILE)).catch(() => undefined);
    if (leaseFrom !== undefined && (await this.renameQuietly(leaseDir, leaseFrom))) return;
    await this.fs.rmdir(leaseDir).catch(() => undefined);
  }

  private async renameQuietly(from: string, to: string): Promise<boolean> {
    try {
      await this.fs.rename(from, to);
      return true;
    } catch {
      return false;
    }
  }

  async readOwner(lockName: string): Promise<OwnerRecord | undefined> {
    return readOwnerAt(this.fs, this.lockDir(lockName));
  }

  /** Lock folders and tombstones under `running/`, by name (no file types: sshfs may not give them). */
  async listEntries(): Promise<{ locks: string[]; tombstones: string[] }> {
    let names: string[];
    try {
      names = await this.fs.readdir(this.runningDir);
    } catch (error) {
      if (errnoName(error) === 'ENOENT') return { locks: [], tombstones: [] };
      throw error;
    }
    return { locks: names.filter((name) => LOCK_NAME.test(name)), tombstones: names.filter((name) => TOMBSTONE_NAME.test(name)) };
  }

  /**
   * Break a lock whose owner record still shows `signature` (leaseId:counter, or `none`): rename
   * the folder to a tombstone unique to this attempt. Returns the tombstone's name, or undefined
   * when the lock moved on (a heartbeat arrived) or another node won the race.
   */
  async breakStale(lockName: string, signature: string): Promise<string | undefined> {
    const owner = await this.readOwner(lockName);
    if (ownerSignature(owner) !== signature) return undefined;
    const tombstone = `${lockName}.tomb.${this.options.nodeId}.${this.options.random.token()}`;
    try {
      await this.fs.rename(this.lockDir(lockName), join(this.runningDir, tombstone));
      return tombstone;
    } catch (error) {
      const code = errnoName(error);
      if (isGone(error) || code === 'ENOTEMPTY' || code === 'EEXIST') return undefined;
      throw error;
    }
  }
}

/** What an observer compares between two looks at a lock. */
export function ownerSignature(owner: OwnerRecord | undefined): string {
  return owner === undefined ? 'none' : `${owner.leaseId}:${owner.counter}`;
}
