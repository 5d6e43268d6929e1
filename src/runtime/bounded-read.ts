import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';

/**
 * Reading files of the shared store, where another tool, a person or an attacker can leave any
 * name, type, size or bytes (DESIGN.md invariant 8). A file is read only when `lstat` shows a
 * regular file no larger than the caller's limit; it is opened with O_NOFOLLOW (a symlink
 * swapped in after the lstat fails with ELOOP) and O_NONBLOCK (a FIFO swapped in does not block
 * a thread-pool thread in open for good), checked again with fstat, and read with the limit as
 * the cap. What is refused is described by its type and size, never by its content.
 */

/** Task files, owner records, retry states, node heartbeats: a few hundred bytes; 1 MiB is already absurd. */
export const STORE_RECORD_MAX_BYTES = 1024 * 1024;
/** A node's push history and the verify summary hold up to a few thousand events. */
export const STORE_REPORT_MAX_BYTES = 16 * 1024 * 1024;

export type BoundedRead =
  | { readonly kind: 'text'; readonly text: string; readonly mtimeMs: number; readonly ctimeMs: number; readonly sizeBytes: number; readonly ino: number }
  /** Not read: `reason` says what the entry is (type, size), never what it holds. */
  | { readonly kind: 'refused'; readonly reason: string };

const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/** What `lstat` tells of an entry, as far as the checks here need it. */
export type EntryStats = Pick<
  fs.Stats,
  'mtimeMs' | 'ctimeMs' | 'ino' | 'size' | 'isFile' | 'isDirectory' | 'isSymbolicLink' | 'isFIFO' | 'isSocket' | 'isBlockDevice' | 'isCharacterDevice'
>;

/** What an entry is, in words for a log line or a quarantine reason. */
export function entryType(stats: EntryStats): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isCharacterDevice()) return 'a character device';
  return 'an entry of unknown type';
}

/** Why an entry with these stats is not read, or undefined when it may be. Pure. */
export function refusalOf(stats: EntryStats, maxBytes: number): string | undefined {
  if (!stats.isFile()) return `${entryType(stats)} where a file is expected`;
  if (stats.size > maxBytes) return `${stats.size} bytes, over the ${maxBytes}-byte limit`;
  return undefined;
}

/**
 * The file at `path` as UTF-8 text with its mtime, or why it was refused. Errors of the path
 * itself (ENOENT, ESTALE, EACCES, EIO …) reject as usual, for the caller to classify.
 */
export async function readBounded(path: string, maxBytes: number): Promise<BoundedRead> {
  const refused = refusalOf(await fsp.lstat(path), maxBytes);
  if (refused !== undefined) return { kind: 'refused', reason: refused };
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(path, OPEN_FLAGS);
  } catch (error) {
    // ELOOP: the name became a symlink after the lstat.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return { kind: 'refused', reason: 'a symbolic link where a file is expected' };
    throw error;
  }
  let read: BoundedRead;
  try {
    read = await readOpen(handle, maxBytes);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  await handle.close();
  return read;
}

async function readOpen(handle: fsp.FileHandle, maxBytes: number): Promise<BoundedRead> {
  const stats = await handle.stat();
  const refused = refusalOf(stats, maxBytes);
  if (refused !== undefined) return { kind: 'refused', reason: refused };
  // One byte more than the file had: the store's files are replaced, never written in place, so
  // one that grew since the fstat is a foreign writer's, and a part of it is no record.
  const buffer = Buffer.allocUnsafe(stats.size + 1);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  if (bytesRead > stats.size) return { kind: 'refused', reason: 'a file that grew while being read' };
  return { kind: 'text', text: buffer.toString('utf8', 0, bytesRead), mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, sizeBytes: bytesRead, ino: stats.ino };
}

/** A refused read as an error, for callers whose records are "no information" when unreadable. */
export class RefusedEntryError extends Error {
  readonly code = 'EREFUSED';
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`refused ${path}: ${reason}`);
  }
}

/** `readBounded`'s text; a refused entry rejects with a RefusedEntryError (content never in it). */
export async function readBoundedText(path: string, maxBytes: number): Promise<string> {
  const read = await readBounded(path, maxBytes);
  if (read.kind === 'refused') throw new RefusedEntryError(path, read.reason);
  return read.text;
}
