import { promises as fsp } from 'node:fs';
import { StoreError } from '../errors.js';
import { readBounded, type BoundedRead, type EntryStats } from '../runtime/bounded-read.js';
import { errnoName } from '../runtime/errno.js';

/** The part of a `FileHandle` the store uses. */
export interface StoreFileHandle {
  writeFile(data: string): Promise<void>;
  sync(): Promise<void>;
  /** Sets the file's times (a backdated task is published with its mtime already in place). */
  utimes(atime: Date, mtime: Date): Promise<void>;
  close(): Promise<void>;
}

/** What `lstat` says of an entry: the entry itself, a symlink never followed. */
export type StoreStats = EntryStats;

/**
 * Every filesystem call the store makes goes through here, so tests can inject the
 * faults a shared filesystem produces (ENOSPC, EROFS, EPERM from `link` on sshfs).
 */
export interface StoreFs {
  open(path: string, flags: 'r' | 'wx'): Promise<StoreFileHandle>;
  link(existingPath: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(oldPath: string, newPath: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  /**
   * A file's text and mtime through one descriptor, only when `lstat` shows a regular file of at
   * most `maxBytes`; anything else is refused by type and size, unread (runtime/bounded-read.ts).
   */
  readBounded(path: string, maxBytes: number): Promise<BoundedRead>;
  lstat(path: string): Promise<StoreStats>;
  mkdir(path: string, options?: { recursive: true }): Promise<unknown>;
  rmdir(path: string): Promise<void>;
}

export const nodeStoreFs: StoreFs = {
  open: (path, flags) => fsp.open(path, flags),
  link: (existingPath, newPath) => fsp.link(existingPath, newPath),
  unlink: (path) => fsp.unlink(path),
  rename: (oldPath, newPath) => fsp.rename(oldPath, newPath),
  readdir: (path) => fsp.readdir(path),
  readBounded,
  lstat: (path) => fsp.lstat(path),
  mkdir: (path, options) => fsp.mkdir(path, options),
  rmdir: (path) => fsp.rmdir(path),
};

/** A real I/O failure, named by what the store was doing and where. */
export function storeError(operation: string, path: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const code = errnoName(error) ?? 'error';
  const detail = error instanceof Error ? error.message : String(error);
  return new StoreError(`${operation} failed (${code}) at ${path}: ${detail}`, { cause: error });
}

/** For cleanup after a failure or a lost race: the original outcome matters more than this one. */
export async function removeQuietly(fs: StoreFs, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch {
    // Nothing more can be done here; a leftover temp is swept by `sweepBuilding`.
  }
}

export async function exists(fs: StoreFs, path: string): Promise<boolean> {
  try {
    await fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}
