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

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * Cross-node URI locks: an atomic `mkdir` of `running/<lockName>` wins, and the winner writes
 * an owner record inside it. Nothing here trusts file mtimes: holders advance a counter and
 * observers judge staleness by their own clocks (see LockObserver).
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
    } catch (error) {
      // Without an owner record nobody could tell whose lock this is: give it back at once.
      await this.fs.rmdir(this.lockDir(lockName)).catch(() => undefined);
      throw error;
    }
    return held;
  }

  async readOwner(lockName: string): Promise<OwnerRecord | undefined> {
    return readOwnerAt(this.fs, this.lockDir(lockName));
  }

  /** Lock folder names under `running/` (tombstones and stray files excluded). */
  async listLockNames(): Promise<string[]> {
    try {
      const entries = await this.fs.readdir(this.runningDir, { withFileTypes: true });
      return entries.filter((entry) => entry.isDirectory() && /^[0-9a-f]{40}$/.test(entry.name)).map((entry) => entry.name);
    } catch (error) {
      if (errno(error) === 'ENOENT') return [];
      throw error;
    }
  }

  /**
   * Release a lock whose holder is this node's earlier incarnation (same node id), after its
   * claimed tasks were put back. Used at start-up only; never for another node's lock.
   */
  async releaseStale(lockName: string, expectedLeaseId: string | undefined): Promise<boolean> {
    const dir = this.lockDir(lockName);
    const owner = await readOwnerAt(this.fs, dir);
    if (owner !== undefined && owner.leaseId !== expectedLeaseId) return false;
    await this.fs.unlink(join(dir, OWNER_FILE)).catch(() => undefined);
    try {
      await this.fs.rmdir(dir);
      return true;
    } catch (error) {
      if (errno(error) === 'ENOENT') return true;
      return false;
    }
  }
}

async function readOwnerAt(fs: LockFs, dir: string): Promise<OwnerRecord | undefined> {
  try {
    return parseOwnerRecord(await fs.readFile(join(dir, OWNER_FILE), 'utf8'));
  } catch (error) {
    if (errno(error) === 'ENOENT' || errno(error) === 'ENOTDIR' || errno(error) === 'ESTALE') return undefined;
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
  async heartbeat(): Promise<boolean> {
    if (!(await this.stillMine())) return false;
    const next: OwnerRecord = { ...this.record, counter: this.record.counter + 1, heartbeatAt: this.clock.now() };
    await this.writeRecord(next);
    this.record = next;
    return true;
  }

  /** Remove the owner record and the folder. Returns false when the lock was no longer ours. */
  async release(): Promise<boolean> {
    if (!(await this.stillMine())) return false;
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
