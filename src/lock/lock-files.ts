import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { readBoundedText, STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { errnoName, isPathGone, refusedErrno } from '../runtime/errno.js';
import { OWNER_FILE, parseOwnerRecord, type OwnerRecord } from './owner-record.js';

/** The filesystem calls of the lock, and how owner records are read and written. */
export type LockFs = Pick<typeof fsp, 'mkdir' | 'writeFile' | 'rename' | 'readFile' | 'unlink' | 'rmdir' | 'readdir' | 'lstat'>;

/**
 * Owner records are read only when they are a regular file of plausible size: anything else in
 * the store may be planted (a FIFO would block the read for good, a 3 GB file exhaust memory).
 */
export const nodeLockFs: LockFs = { ...fsp, readFile: ((path: string) => readBoundedText(path, STORE_RECORD_MAX_BYTES)) as LockFs['readFile'] };

/**
 * An entry of the lock folder this node may not read (mode 000, another user's): no record to
 * judge by, as for one that is not there. The lock counts as ownerless and is taken over after
 * lockStale; the recovery moves the entry to corrupt/. Never a failure of the whole scan.
 */
function unreadable(error: unknown): boolean {
  return refusedErrno(error) !== undefined;
}

/**
 * Writes a new file `temp`, then renames it over `path`. A failed write leaves no temp behind: an
 * empty one (ENOSPC) in a new lock folder would keep `acquire` from removing the folder, leaving
 * an ownerless lock until a takeover.
 */
export async function replaceRecord(fs: LockFs, temp: string, path: string, text: string): Promise<void> {
  try {
    await fs.writeFile(temp, text, { flag: 'wx' });
    await fs.rename(temp, path);
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
    const code = errnoName(error);
    if (isPathGone(error) || unreadable(error) || code === 'EREFUSED' || code === 'ELOOP' || code === 'EISDIR') return undefined;
    throw error;
  }
}

/** A real folder, not a symlink to one: `readdir` and every path below it would follow the link. */
async function isRealDir(fs: LockFs, path: string): Promise<boolean> {
  try {
    return (await fs.lstat(path)).isDirectory();
  } catch (error) {
    if (isPathGone(error)) return false;
    throw error;
  }
}

/** Names in a lock folder that are never a lease folder: claimed task files, temps, `.nfs*`. */
function mayBeLease(name: string): boolean {
  return !(name.startsWith('.') || name.endsWith('.json') || name.endsWith('.tmp'));
}

/**
 * The lock folder at `dir` holds `leaseId`'s folder and no other lease folder. A node that made
 * the lock folder, then was paused past lockStale before its lease folder, may find a peer's
 * lock at that path after the peer broke the ownerless folder and took the URI again: its
 * `mkdir <leaseId>` then succeeds inside the peer's lock. Only a lease alone in its lock folder
 * holds the URI.
 */
export async function leaseIsAlone(fs: LockFs, dir: string, leaseId: string): Promise<boolean> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if (isPathGone(error)) return false;
    throw error;
  }
  if (!names.includes(leaseId)) return false;
  for (const name of names) {
    if (name !== leaseId && mayBeLease(name) && (await isRealDir(fs, join(dir, name)))) return false;
  }
  return true;
}

/**
 * A lease folder a reader may look into. One this node may not look at (a lock folder that is
 * listable but not searchable) holds no record it can read: the lock counts as ownerless, as for
 * any record it cannot read, instead of failing every scan of `running/`.
 */
async function isLeaseFolderToRead(fs: LockFs, path: string): Promise<boolean> {
  try {
    return await isRealDir(fs, path);
  } catch (error) {
    if (unreadable(error)) return false;
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
    if (isPathGone(error) || unreadable(error)) return undefined;
    throw error;
  }
  for (const name of names) {
    if (!mayBeLease(name) || !(await isLeaseFolderToRead(fs, join(dir, name)))) continue;
    const owner = await readRecordFile(fs, join(dir, name, OWNER_FILE));
    if (owner !== undefined && owner.leaseId === name) return owner;
  }
  return undefined;
}
