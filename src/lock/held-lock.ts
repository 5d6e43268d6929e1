import { dirname, join } from 'node:path';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import { errnoName, isPathGone } from '../runtime/errno.js';
import { readRecordFile, replaceRecord, type LockFs } from './lock-files.js';
import { OWNER_FILE, type OwnerRecord } from './owner-record.js';

/** A lock this process holds. Every store write made under it is fenced by `stillMine()`. */
export class HeldLock {
  private record: OwnerRecord;
  private lost = false;
  /** Monotonic time at which the last successful owner-record write began. */
  private wroteAt = -Infinity;

  constructor(
    private readonly fs: LockFs,
    readonly dir: string,
    readonly lockName: string,
    record: OwnerRecord,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly trustMs: () => number = () => 0,
    /** The lease folder is a waiting folder renamed into place: its task files are claimed already. */
    readonly movedIn = false,
  ) {
    this.record = record;
  }

  get leaseId(): string {
    return this.record.leaseId;
  }

  /** Where this lease's claimed tasks live, relative to running/. */
  get claimName(): string {
    return `${this.lockName}/${this.record.leaseId}`;
  }

  /** Monotonic time at which the last successful owner-record write began: what a holder's stop deadline counts from. */
  get lastWriteAt(): number {
    return this.wroteAt;
  }

  get counter(): number {
    return this.record.counter;
  }

  /** This lease's own folder: every file the holder writes is inside it. */
  private get leaseDir(): string {
    return join(this.dir, this.record.leaseId);
  }

  /**
   * Temp and record both live in the lease folder, so after a takeover (the lock folder renamed
   * to a tombstone, perhaps a new lock made by another node) the paths simply do not exist: a
   * late write fails instead of replacing the new holder's record.
   */
  async writeRecord(record: OwnerRecord): Promise<void> {
    const temp = join(this.leaseDir, `.owner.${this.random.token()}.tmp`);
    const startedAt = this.clock.monotonic();
    await replaceRecord(this.fs, temp, join(this.leaseDir, OWNER_FILE), `${JSON.stringify(record)}\n`);
    this.wroteAt = startedAt;
  }

  /** True while the owner record in the lock folder is still ours (same lease). */
  async stillMine(): Promise<boolean> {
    if (this.lost) return false;
    if (this.clock.monotonic() - this.wroteAt < this.trustMs()) return true;
    return this.readStillMine();
  }

  private async readStillMine(): Promise<boolean> {
    const owner = await readRecordFile(this.fs, join(this.leaseDir, OWNER_FILE));
    if (owner?.leaseId !== this.record.leaseId) this.lost = true;
    return !this.lost;
  }

  /** Advance the heartbeat counter; false (and nothing written) when the lock is no longer ours. */
  async heartbeat(extra: Partial<Pick<OwnerRecord, 'pushPid' | 'pushStartTime' | 'bootId'>> = {}): Promise<boolean> {
    // Always read: the heartbeat is what notices a lost lock and stops the push. Only the beat
    // that records a new push process (right after the holder's own write at acquire) trusts the
    // window, as every other fenced write does; its write is fenced by path like every lease
    // write. The periodic beats, the same pid again, read.
    const mine = extra.pushPid === undefined || extra.pushPid === this.record.pushPid ? this.readStillMine() : this.stillMine();
    if (this.lost || !(await mine)) return false;
    const next: OwnerRecord = { ...this.record, ...extra, counter: this.record.counter + 1, heartbeatAt: this.clock.now() };
    try {
      await this.writeRecord(next);
    } catch (error) {
      // The lease folder vanished between the check and the write: a takeover happened.
      if (isPathGone(error)) {
        this.lost = true;
        return false;
      }
      throw error;
    }
    this.record = next;
    return true;
  }

  /** Remove the claim folder, the owner record and the lock folder. False when it was no longer ours. */
  async release(): Promise<boolean> {
    if (!(await this.stillMine())) return false;
    this.lost = true;
    try {
      await this.fs.unlink(join(this.leaseDir, OWNER_FILE));
      await this.removeLeaseDir();
    } catch (error) {
      if (isPathGone(error)) return false; // taken over meanwhile: nothing here is ours any more
      throw error;
    }
    try {
      await this.fs.rmdir(this.dir);
    } catch (error) {
      // ENOTEMPTY: the folder is now someone else's lock (we were taken over after all); leave it.
      if (!isPathGone(error) && errnoName(error) !== 'ENOTEMPTY' && errnoName(error) !== 'EEXIST') throw error;
    }
    return true;
  }

  /**
   * Release and finish in one step: the lease folder — owner record and the finished task files
   * claimed into it — is renamed to `to` (outside running/, where nobody reads it as a lock or a
   * claim; its files are deleted later), then the lock folder is removed. Fenced as every lease
   * path is: after a takeover the lease folder no longer exists and nothing is moved (false).
   * `onlyFinished` sees the folder's entries first and must accept them: a file the caller does
   * not know was pushed (a claim whose rename reply a network filesystem lost) must never be
   * moved where it would be deleted. Refused, or any failure of the rename, leaves everything in
   * place with the lock still held, and throws: the caller finishes file by file and releases.
   */
  async retire(to: string, onlyFinished: (entries: readonly string[]) => boolean): Promise<boolean> {
    if (!(await this.stillMine())) return false;
    let entries: string[];
    try {
      entries = await this.fs.readdir(this.leaseDir);
    } catch (error) {
      if (isPathGone(error)) {
        this.lost = true;
        return false;
      }
      throw error;
    }
    if (!onlyFinished(entries)) throw new Error(`the claim folder ${this.leaseDir} holds files this push did not finish`);
    try {
      await this.fs.rename(this.leaseDir, to);
    } catch (error) {
      // ENOENT names either path: the lease folder gone (taken over) or the destination's folder
      // missing. Only the first means the lock is lost.
      if (isPathGone(error) && !(await this.leaseDirExists())) {
        this.lost = true;
        return false;
      }
      throw error;
    }
    this.lost = true;
    try {
      await this.fs.rmdir(this.dir);
    } catch {
      // The lease and its tasks are retired whatever happens here. A lock folder left behind
      // (ENOTEMPTY: already someone else's; or an I/O error) holds no owner record: observers
      // take such a lock over after lockStale, as after a crash between these two steps.
    }
    return true;
  }

  private async leaseDirExists(): Promise<boolean> {
    try {
      await this.fs.readdir(this.leaseDir);
      return true;
    } catch (error) {
      if (isPathGone(error)) return false;
      throw error;
    }
  }

  /**
   * A reader on this client that still has our owner.json open (this node's own observer or
   * fence, `refrelay status`) makes NFS and FUSE keep the unlinked file under a silly name
   * (`.nfs*`, `.fuse_hidden*`) until it closes, so the folder is not empty yet. Failing here
   * would leave the URI locked without an owner record until a takeover, lockStale later. Move
   * the lease folder aside instead, as a tombstone observers sweep; the rename is as fenced as
   * every other path under the lease.
   */
  private async removeLeaseDir(): Promise<void> {
    try {
      await this.fs.rmdir(this.leaseDir);
    } catch (error) {
      const code = errnoName(error);
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      await this.fs.rename(this.leaseDir, join(dirname(this.dir), `${this.lockName}.tomb.${this.record.leaseId}`));
    }
  }
}
