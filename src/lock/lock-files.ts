import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { readBoundedText, STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { errnoName } from '../runtime/errno.js';
import { BatchFileOps } from '../store/batch-fs.js';
import { OWNER_FILE, parseOwnerRecord, type OwnerRecord } from './owner-record.js';

/** The filesystem calls of the lock, and how owner records are read and written. */
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
export const nodeLockFs: LockFs = {
  ...fsp,
  readFile: ((path: string) => readBoundedText(path, STORE_RECORD_MAX_BYTES)) as LockFs['readFile'],
  replaceFile: (temp, path, data) => recordWriter.replaceFile(temp, path, data),
};

export function errno(error: unknown): string | undefined {
  return errnoName(error);
}


export function gone(error: unknown): boolean {
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
export async function replaceRecord(fs: LockFs, temp: string, path: string, text: string): Promise<void> {
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
export async function readRecordFile(fs: LockFs, path: string): Promise<OwnerRecord | undefined> {
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
export async function readOwnerAt(fs: LockFs, dir: string): Promise<OwnerRecord | undefined> {
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

