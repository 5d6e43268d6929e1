import { TaskFormatError } from '../errors.js';
import { decodeTask, type Task } from '../task/task.js';
import { errnoOf, isGone, storeError, type StoreFileHandle, type StoreFs } from './store-fs.js';

export type ReadOutcome =
  | { readonly kind: 'task'; readonly task: Task; readonly mtimeMs: number }
  | { readonly kind: 'gone' }
  | { readonly kind: 'corrupt'; readonly reason: string };

/** Errors that belong to this one entry, not to the store: the entry is bad, the pass goes on. */
const UNREADABLE_ENTRY = new Set(['EISDIR', 'EACCES', 'EPERM']);

/**
 * Reads one task file through a single open descriptor (open, fstat, read, close), so the
 * mtime and the content belong to the same file even if the name is replaced meanwhile.
 * A vanished file is a lost race; bad content or a directory is corrupt; anything else
 * (EIO, EMFILE …) is a store failure.
 */
export async function readTaskFile(fs: StoreFs, path: string): Promise<ReadOutcome> {
  let handle: StoreFileHandle | undefined;
  try {
    if (fs.readWithMtime !== undefined) {
      const { text, mtimeMs } = await fs.readWithMtime(path);
      return { kind: 'task', task: decodeTask(text), mtimeMs };
    }
    handle = await fs.open(path, 'r');
    const { mtimeMs } = await handle.stat();
    const text = await handle.readFile('utf8');
    return { kind: 'task', task: decodeTask(text), mtimeMs };
  } catch (error) {
    if (isGone(error)) return { kind: 'gone' };
    if (error instanceof TaskFormatError) return { kind: 'corrupt', reason: error.message };
    const code = errnoOf(error);
    if (code !== undefined && UNREADABLE_ENTRY.has(code)) {
      return { kind: 'corrupt', reason: code === 'EISDIR' ? 'a directory where a task file is expected' : `unreadable (${code})` };
    }
    throw storeError('read task file', path, error);
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * For records whose absence or damage only means "no information" (uri state, owner
 * records, node heartbeats, reasons): undefined instead of an error. Real I/O failures still throw.
 */
export async function readJsonTolerant(fs: StoreFs, path: string, operation: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(path, 'utf8');
  } catch (error) {
    const code = errnoOf(error);
    if (isGone(error) || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
    throw storeError(operation, path, error);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
