import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import { OWNER_FILE, parseOwnerRecord, type OwnerRecord } from './owner-record.js';

export type LockFs = Pick<typeof fsp, 'mkdir' | 'writeFile' | 'rename' | 'readFile' | 'unlink' | 'rmdir' | 'readdir'>;

export interface UriLocksOptions {
  /** `<store>/ref-updates/running`: each lock is a folder `<lockName>` in it. */
  readonly runningDir: string;
  readonly nodeId: string;
  readonly host: string;
  readonly pid: number;
  readonly clock: Clock;
  readonly random: Random;
  readonly fs?: LockFs;
}

const LOCK_NAME = /^[0-9a-f]{40}$/;
const TOMBSTONE_NAME = /^[0-9a-f]{40}\.tomb\./;

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
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
    this.fs = options.fs ?? fsp;
  }

  lockDir(lockName: string): string {
    return join(this.runningDir, lockName);
  }

  /** Take the lock, or `undefined` when someone else holds it (a lost race is not an error). */
  async acquire(lockName: string, uri: string): Promise<HeldLock | undefined> {
    await this.fs.mkdir(this.runningDir, { recursive: true });
    try {
      await this.fs.mkdir(this.lockDir(lockName));
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
    const held = new HeldLock(this.fs, this.lockDir(lockName), lockName, record, this.options.clock, this.options.random);
    try {
      await held.writeRecord(record);
      await this.fs.mkdir(join(this.lockDir(lockName), record.leaseId));
    } catch (error) {
      // Without an owner record nobody could tell whose lock this is: give it back at once.
      await this.fs.unlink(join(this.lockDir(lockName), OWNER_FILE)).catch(() => undefined);
      await this.fs.rmdir(this.lockDir(lockName)).catch(() => undefined);
      throw error;
    }
    return held;
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
      if (code === 'ENOENT' || code === 'ENOTEMPTY' || code === 'EEXIST') return undefined;
      throw error;
    }
  }
}

/** What an observer compares between two looks at a lock. */
export function ownerSignature(owner: OwnerRecord | undefined): string {
  return owner === undefined ? 'none' : `${owner.leaseId}:${owner.counter}`;
}

async function readOwnerAt(fs: LockFs, dir: string): Promise<OwnerRecord | undefined> {
  try {
    return parseOwnerRecord(await fs.readFile(join(dir, OWNER_FILE), 'utf8'));
  } catch (error) {
    const code = errno(error);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ESTALE') return undefined;
    throw error;
  }
}

/** A lock this process holds. Every store write made under it is fenced by `stillMine()`. */
export class HeldLock {
  private record: OwnerRecord;
  private lost = false;

  constructor(
    private readonly fs: LockFs,
    readonly dir: string,
    readonly lockName: string,
    record: OwnerRecord,
    private readonly clock: Clock,
    private readonly random: Random,
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

  get counter(): number {
    return this.record.counter;
  }

  async writeRecord(record: OwnerRecord): Promise<void> {
    const temp = join(this.dir, `.owner.${this.random.token()}.tmp`);
    await this.fs.writeFile(temp, `${JSON.stringify(record)}\n`);
    try {
      await this.fs.rename(temp, join(this.dir, OWNER_FILE));
    } catch (error) {
      await this.fs.unlink(temp).catch(() => undefined);
      throw error;
    }
  }

  /** True while the owner record in the lock folder is still ours (same lease). */
  async stillMine(): Promise<boolean> {
    if (this.lost) return false;
    const owner = await readOwnerAt(this.fs, this.dir);
    if (owner?.leaseId !== this.record.leaseId) this.lost = true;
    return !this.lost;
  }

  /** Advance the heartbeat counter; false (and nothing written) when the lock is no longer ours. */
  async heartbeat(extra: Partial<Pick<OwnerRecord, 'pushPid'>> = {}): Promise<boolean> {
    if (!(await this.stillMine())) return false;
    const next: OwnerRecord = { ...this.record, ...extra, counter: this.record.counter + 1, heartbeatAt: this.clock.now() };
    await this.writeRecord(next);
    this.record = next;
    return true;
  }

  /** Remove the claim folder, the owner record and the lock folder. False when it was no longer ours. */
  async release(): Promise<boolean> {
    if (!(await this.stillMine())) return false;
    await this.fs.rmdir(join(this.dir, this.record.leaseId)).catch((error: unknown) => {
      if (errno(error) !== 'ENOENT') throw error;
    });
    await this.fs.unlink(join(this.dir, OWNER_FILE)).catch((error: unknown) => {
      if (errno(error) !== 'ENOENT') throw error;
    });
    try {
      await this.fs.rmdir(this.dir);
    } catch (error) {
      if (errno(error) !== 'ENOENT') throw error;
    }
    this.lost = true;
    return true;
  }
}
