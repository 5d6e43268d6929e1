import { TaskFormatError } from '../errors.js';
import { STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { decodeTask, type Task } from '../task/task.js';
import { quarantine } from './quarantine.js';
import type { StoreContext } from './store-context.js';
import { storeError, type StoreFs } from './store-fs.js';
import { errnoName, isGone, isPathGone } from '../runtime/errno.js';

export type ReadOutcome =
  /** `ino` and `sizeBytes` tell this file from another put under its name later (read-ahead.ts). */
  | { readonly kind: 'task'; readonly task: Task; readonly mtimeMs: number; readonly ino: number; readonly sizeBytes: number }
  | { readonly kind: 'gone' }
  | { readonly kind: 'corrupt'; readonly reason: string };

/** Errors that belong to this one entry, not to the store: the entry is bad, the pass goes on. */
const UNREADABLE_ENTRY = new Set(['EISDIR', 'EACCES', 'EPERM', 'ELOOP']);

/**
 * Reads one task file through a single open descriptor (open, fstat, read, close), so the
 * mtime and the content belong to the same file even if the name is replaced meanwhile.
 * Only a regular file of plausible size is opened (StoreFs.readBounded). A vanished file is a
 * lost race; bad content, or an entry of another type or size, is corrupt; anything else
 * (EIO, EMFILE …) is a store failure.
 */
export async function readTaskFile(fs: StoreFs, path: string, maxBytes = STORE_RECORD_MAX_BYTES): Promise<ReadOutcome> {
  try {
    const read = await fs.readBounded(path, maxBytes);
    if (read.kind === 'refused') return { kind: 'corrupt', reason: read.reason };
    return { kind: 'task', task: decodeTask(read.text), mtimeMs: read.mtimeMs, ino: read.ino, sizeBytes: read.sizeBytes };
  } catch (error) {
    if (isGone(error)) return { kind: 'gone' };
    if (error instanceof TaskFormatError) return { kind: 'corrupt', reason: error.message };
    const code = errnoName(error);
    if (code !== undefined && UNREADABLE_ENTRY.has(code)) {
      return { kind: 'corrupt', reason: code === 'EISDIR' ? 'a directory where a file is expected' : `unreadable (${code})` };
    }
    throw storeError('read task file', path, error);
  }
}

/** A store record's text and mtime, or why there is none to read. */
export type RecordRead =
  | { readonly kind: 'text'; readonly text: string; readonly mtimeMs: number }
  | { readonly kind: 'absent' }
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * A record whose absence only means "no information" (uri state, owner records, node
 * heartbeats, reasons). Entries of another type or size are refused unread; real I/O failures
 * still throw.
 */
export async function readRecord(fs: StoreFs, path: string, operation: string): Promise<RecordRead> {
  try {
    return await fs.readBounded(path, STORE_RECORD_MAX_BYTES);
  } catch (error) {
    const code = errnoName(error);
    if (isPathGone(error) || code === 'EISDIR') return { kind: 'absent' };
    if (code === 'ELOOP' || code === 'EACCES' || code === 'EPERM') return { kind: 'refused', reason: `unreadable (${code})` };
    throw storeError(operation, path, error);
  }
}

/** `readRecord` parsed as JSON; undefined for anything absent, refused or not JSON. */
export async function readJsonTolerant(fs: StoreFs, path: string, operation: string): Promise<unknown> {
  return parseJson(await readRecord(fs, path, operation));
}

/**
 * `readJsonTolerant` for records that a refused entry would otherwise stand in for on every
 * read (a FIFO or a 3 GB file as `uri-state/<key>.json`, in `nodes/`): the entry is moved to
 * corrupt/ with its reason, so a record can be written there again.
 */
export async function readJsonOrQuarantine(ctx: StoreContext, path: string, name: string, operation: string): Promise<unknown> {
  const read = await readRecord(ctx.fs, path, operation);
  if (read.kind === 'refused') await quarantine(ctx, path, name, read.reason);
  return parseJson(read);
}

function parseJson(read: RecordRead): unknown {
  if (read.kind !== 'text') return undefined;
  try {
    return JSON.parse(read.text) as unknown;
  } catch {
    return undefined;
  }
}
