import * as fsCallback from 'node:fs';
import { promises as fsp } from 'node:fs';
import { StoreError } from '../errors.js';
import { errnoName } from '../runtime/errno.js';
import { readText } from '../runtime/read-text.js';
import { BatchFileOps, type FileOp, type FileOpResults } from './batch-fs.js';

/** The part of a `FileHandle` the store uses. */
export interface StoreFileHandle {
  writeFile(data: string): Promise<void>;
  sync(): Promise<void>;
  /** Sets the file's times (a backdated task is published with its mtime already in place). */
  utimes(atime: Date, mtime: Date): Promise<void>;
  stat(): Promise<{ readonly mtimeMs: number }>;
  readFile(encoding: 'utf8'): Promise<string>;
  close(): Promise<void>;
}

export interface StoreStats {
  readonly mtimeMs: number;
  isDirectory(): boolean;
}

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
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  stat(path: string): Promise<StoreStats>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
  rmdir(path: string): Promise<void>;
  /**
   * open + fstat + read + close through one descriptor. Optional: the node adapter implements it
   * with callback I/O, about 4× faster than FileHandle promises for a pass over thousands of
   * files; without it the store uses `open` and the handle.
   */
  readWithMtime?(path: string): Promise<{ readonly text: string; readonly mtimeMs: number }>;
  /**
   * Many renames and unlinks in one call, each still one atomic system call, with a result per
   * op. Optional: the node adapter runs them on worker threads (see BatchFileOps); without it
   * the store makes one `rename` or `unlink` call per file.
   */
  runFileOps?(ops: readonly FileOp[]): Promise<FileOpResults>;
}

function readWithMtime(path: string): Promise<{ text: string; mtimeMs: number }> {
  return new Promise((resolve, reject) => {
    fsCallback.open(path, 'r', (openError, fd) => {
      if (openError) return reject(openError);
      const fail = (error: Error): void => fsCallback.close(fd, () => reject(error));
      fsCallback.fstat(fd, (statError, stats) => {
        if (statError) return fail(statError);
        if (stats.isDirectory()) return fail(Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: 'EISDIR' }));
        const buffer = Buffer.allocUnsafe(stats.size);
        fsCallback.read(fd, buffer, 0, stats.size, 0, (readError, bytes) => {
          if (readError) return fail(readError);
          fsCallback.close(fd, (closeError) => {
            if (closeError) return reject(closeError);
            resolve({ text: buffer.toString('utf8', 0, bytes), mtimeMs: stats.mtimeMs });
          });
        });
      });
    });
  });
}

const batchFileOps = new BatchFileOps();

export const nodeStoreFs: StoreFs = {
  open: (path, flags) => fsp.open(path, flags),
  link: (existingPath, newPath) => fsp.link(existingPath, newPath),
  unlink: (path) => fsp.unlink(path),
  rename: (oldPath, newPath) => fsp.rename(oldPath, newPath),
  readdir: (path) => fsp.readdir(path),
  readFile: readText,
  stat: (path) => fsp.stat(path),
  mkdir: (path, options) => fsp.mkdir(path, options),
  rmdir: (path) => fsp.rmdir(path),
  readWithMtime,
  runFileOps: (ops) => batchFileOps.run(ops),
};

export function errnoOf(error: unknown): string | undefined {
  return errnoName(error);
}

/** The entry is not there (any more): on NFS a vanished file can also show up as ESTALE. */
export function isGone(error: unknown): boolean {
  const code = errnoOf(error);
  return code === 'ENOENT' || code === 'ESTALE';
}

/** A real I/O failure, named by what the store was doing and where. */
export function storeError(operation: string, path: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const code = errnoOf(error) ?? 'error';
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
    await fs.stat(path);
    return true;
  } catch {
    return false;
  }
}
