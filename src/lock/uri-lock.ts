import * as fsp from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Clock } from '../runtime/clock.js';
import { errnoName } from '../runtime/errno.js';
import type { Random } from '../runtime/random.js';
import { readBoundedText, STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { BatchFileOps } from '../store/batch-fs.js';
import { OWNER_FILE, parseOwnerRecord, type OwnerRecord } from './owner-record.js';

export type LockFs = Pick<typeof fsp, 'mkdir' | 'writeFile' | 'rename' | 'readFile' | 'unlink' | 'rmdir' | 'readdir' | 'lstat'> & {
  /** Write a new file `temp`, then rename it over `path`, in one step; without it, writeFile and rename. */
  readonly replaceFile?: (temp: string, path: string, data: string) => Promise<void>;
};

/**
 * Owner records are written on a worker thread of their own: on the store's workers a write
 * would wait behind claim and sweep batches of up to 64 operations, seconds on a slow network
 * filesystem, while the new lock has no owner record or its counter stands still.
 */
const recordWriter = new BatchFileOps(1);

/**
 * Owner records are read and written several times per push: reads through callback I/O, and
 * only of a regular file of plausible size (anything else in the store may be planted: a FIFO
 * would block the read for good, a 3 GB file exhaust memory); a record write is one message to
 * the worker instead of four thread-pool round trips.
 */
const nodeLockFs: LockFs = {
  ...fsp,
  readFile: ((path: string) => readBoundedText(path, STORE_RECORD_MAX_BYTES)) as LockFs['readFile'],
  replaceFile: (temp, path, data) => recordWriter.replaceFile(temp, path, data),
};

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

function errno(error: unknown): string | undefined {
  return errnoName(error);
}

/**
 * Cross-node URI locks: an atomic `mkdir` of `running/<lockName>` wins, and the winner writes an
 * owner record inside it and claims tasks into a folder named after its lease
 * (`running/<lockName>/<leaseId>/`). Nothing here trusts file mtimes: holders advance a counter
 * and observers judge staleness by their own monotonic clocks (LockObserver). Breaking a stale
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

  /** Take the lock, or `undefined` when someone else holds it or took it over while it was being taken (a lost race is not an error). */
  async acquire(lockName: string, uri: string): Promise<HeldLock | undefined> {
    try {
      await this.mkdirLock(lockName);
    } catch (error) {
      if (errno(error) === 'EEXIST') return undefined;
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
    const held = new HeldLock(this.fs, this.lockDir(lockName), lockName, record, this.options.clock, this.options.random, this.options.trustMs);
    const leaseDir = join(this.lockDir(lockName), record.leaseId);
    try {
      await this.fs.mkdir(leaseDir);
      await held.writeRecord(record);
    } catch (error) {
      // The folder vanished before the record was written: a peer broke this ownerless lock as
      // stale (this node was paused past lockStale in between) and renamed it away. The lock was
      // lost, as a refused one is; whatever stands at its path now is the peer's, not ours to remove.
      if (gone(error)) return undefined;
      // Without an owner record nobody could tell whose lock this is: give it back at once.
      await this.fs.unlink(join(leaseDir, OWNER_FILE)).catch(() => undefined);
      await this.fs.rmdir(leaseDir).catch(() => undefined);
      await this.fs.rmdir(this.lockDir(lockName)).catch(() => undefined);
      throw error;
    }
    return held;
  }

  /**
   * `running/` is part of the store's layout (made by `refrelay init`): never made here, so a
   * store that is not mounted fails the lock instead of growing one on the local disk.
   */
  private async mkdirLock(lockName: string): Promise<void> {
    await this.fs.mkdir(this.lockDir(lockName));
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
      if (errno(error) === 'ENOENT') return { locks: [], tombstones: [] };
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
      const code = errno(error);
      if (code === 'ENOENT' || code === 'ESTALE' || code === 'ENOTEMPTY' || code === 'EEXIST') return undefined;
      throw error;
    }
  }
}

/** What an observer compares between two looks at a lock. */
export function ownerSignature(owner: OwnerRecord | undefined): string {
  return owner === undefined ? 'none' : `${owner.leaseId}:${owner.counter}`;
}

function gone(error: unknown): boolean {
  const code = errno(error);
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ESTALE';
}

/**
 * An entry of the lock folder this node may not read (mode 000, another user's): no record to
 * judge by, as for one that is not there. The lock counts as ownerless and is taken over after
 * lockStale; the recovery moves the entry to corrupt/. Never a failure of the whole scan.
 */
function unreadable(error: unknown): boolean {
  const code = errno(error);
  return code === 'EACCES' || code === 'EPERM';
}

/**
 * Writes `temp`, then renames it over `path`: in one step where the filesystem offers one, else
 * writeFile and rename. A failed write leaves no temp behind (the worker removes its own; the
 * unlink here also covers a worker that died mid-way): an empty one (ENOSPC) in a new lock folder
 * would keep `acquire` from removing the folder, leaving an ownerless lock until a takeover.
 */
async function replaceRecord(fs: LockFs, temp: string, path: string, text: string): Promise<void> {
  try {
    if (fs.replaceFile !== undefined) {
      await fs.replaceFile(temp, path, text);
    } else {
      await fs.writeFile(temp, text, { flag: 'wx' });
      await fs.rename(temp, path);
    }
  } catch (error) {
    await fs.unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * An owner record that is not a regular file of plausible size (refused unread), or is reached
 * through a symlink, is no record: the lock counts as ownerless and is taken over after
 * lockStale, and the recovery moves what was planted to corrupt/.
 */
async function readRecordFile(fs: LockFs, path: string): Promise<OwnerRecord | undefined> {
  try {
    return parseOwnerRecord(await fs.readFile(path, 'utf8'));
  } catch (error) {
    const code = errno(error);
    if (gone(error) || unreadable(error) || code === 'EREFUSED' || code === 'ELOOP' || code === 'EISDIR') return undefined;
    throw error;
  }
}

/** A real folder, not a symlink to one: `readdir` and every path below it would follow the link. */
async function isRealDir(fs: LockFs, path: string): Promise<boolean> {
  try {
    return (await fs.lstat(path)).isDirectory();
  } catch (error) {
    if (gone(error)) return false;
    throw error;
  }
}

/** The owner record sits in the lease folder: `<lock>/<leaseId>/owner.json`. */
async function readOwnerAt(fs: LockFs, dir: string): Promise<OwnerRecord | undefined> {
  let names: string[];
  try {
    if (!(await isRealDir(fs, dir))) return undefined;
    names = await fs.readdir(dir);
  } catch (error) {
    if (gone(error) || unreadable(error)) return undefined;
    throw error;
  }
  for (const name of names) {
    if (name.startsWith('.') || name.endsWith('.json') || name.endsWith('.tmp')) continue;
    if (!(await isRealDir(fs, join(dir, name)))) continue;
    const owner = await readRecordFile(fs, join(dir, name, OWNER_FILE));
    if (owner !== undefined && owner.leaseId === name) return owner;
  }
  return undefined;
}

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
      if (gone(error)) {
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
      if (gone(error)) return false; // taken over meanwhile: nothing here is ours any more
      throw error;
    }
    try {
      await this.fs.rmdir(this.dir);
    } catch (error) {
      // ENOTEMPTY: the folder is now someone else's lock (we were taken over after all); leave it.
      if (!gone(error) && errno(error) !== 'ENOTEMPTY' && errno(error) !== 'EEXIST') throw error;
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
      if (gone(error)) {
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
      if (gone(error) && !(await this.leaseDirExists())) {
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
      if (gone(error)) return false;
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
      const code = errno(error);
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      await this.fs.rename(this.leaseDir, join(dirname(this.dir), `${this.lockName}.tomb.${this.record.leaseId}`));
    }
  }
}
