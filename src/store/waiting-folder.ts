import { StoreError } from '../errors.js';
import { entryType } from '../runtime/bounded-read.js';
import { errnoName, isGone } from '../runtime/errno.js';
import { laneOfTask, uriKey, type Task } from '../task/task.js';
import { tempPath, writeDurable } from './publish.js';
import type { StoreContext } from './store-context.js';
import { exists, removeQuietly, storeError } from './store-fs.js';
import { waitingFolderName } from './store-paths.js';

/**
 * Putting a file into a URI's waiting folder races with the claimer that empties and removes
 * it: ENOENT makes the folder again. A claim removes a folder at most once per push, so a
 * few attempts are plenty; more means something removes it on purpose.
 */
const ATTEMPTS = 5;

/** `waiting/<folder>` of a task: its URI's, in its lane (DESIGN.md "Waiting folders"). */
export function waitingFolderOf(task: Task): string {
  return waitingFolderName(uriKey(task.uri), laneOfTask(task));
}

/**
 * Makes sure `waiting/<folder>` is a real folder, making it when missing; true when this call
 * made it. Anything else under that name — a symlink above all, through which a link or rename
 * would land outside the store — is refused: that URI's updates cannot be queued until it is
 * gone (the distributor moves it to corrupt/, except a plain file under a live folder's name,
 * which is what Gerrit's plugin names its task files: the error names it for a person).
 */
export async function ensureWaitingFolder(ctx: StoreContext, folder: string, operation: string): Promise<boolean> {
  const dir = ctx.paths.waitingFolder(folder);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      const stats = await ctx.fs.lstat(dir);
      if (stats.isDirectory()) return false;
      throw new StoreError(`${operation}: ${dir} is ${entryType(stats)}, not a folder; refusing to write through it`);
    } catch (error) {
      if (!isGone(error)) throw error instanceof StoreError ? error : storeError(operation, dir, error);
    }
    try {
      await ctx.fs.mkdir(dir);
      return true;
    } catch (error) {
      // Made by another writer meanwhile: look at what is there now.
      if (errnoName(error) !== 'EEXIST') throw storeError(operation, dir, error);
    }
  }
  throw new StoreError(`${operation}: ${dir} keeps changing under this writer`);
}

/**
 * `mkdir waiting/<folder>`: true when made. EEXIST is fine when a real folder stands there (a
 * writer made it meanwhile); anything else under its name is refused, as by ensureWaitingFolder.
 */
async function makeWaitingFolder(ctx: StoreContext, folder: string, operation: string): Promise<boolean> {
  try {
    await ctx.fs.mkdir(ctx.paths.waitingFolder(folder));
    return true;
  } catch (error) {
    if (errnoName(error) !== 'EEXIST') throw storeError(operation, ctx.paths.waitingFolder(folder), error);
    return ensureWaitingFolder(ctx, folder, operation);
  }
}

/** How a file went into a waiting folder. */
export type IntoWaiting = 'moved' | 'already-there' | 'source-gone';

/**
 * `link` (never replaces: 'already-there' when the name is taken) or `rename` (replaces: a
 * task put back over the same task queued meanwhile keeps the older mtime) of `from` into
 * `waiting/<folder>/<name>`, making the folder as often as a claimer removes it in between.
 * 'source-gone': `from` vanished (another node moved it first). `made` hears of folders made.
 */
export async function intoWaitingFolder(
  ctx: StoreContext,
  from: string,
  folder: string,
  name: string,
  how: 'link' | 'rename',
  operation: string,
  made: (folder: string) => void = () => undefined,
): Promise<IntoWaiting> {
  const to = ctx.paths.waitingFile(folder, name);
  if (await ensureWaitingFolder(ctx, folder, operation)) made(folder);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    // Again only after a move found no folder. Made with `mkdir` straight away: on a network
    // filesystem that caches attributes, an `lstat` may still see the folder a claimer removed.
    if (attempt > 0 && (await makeWaitingFolder(ctx, folder, operation))) made(folder);
    try {
      if (how === 'link') await ctx.fs.link(from, to);
      else await ctx.fs.rename(from, to);
      return 'moved';
    } catch (error) {
      const code = errnoName(error);
      // sshfs reports an existing link target as EPERM.
      if (how === 'link' && (code === 'EEXIST' || (code === 'EPERM' && (await exists(ctx.fs, to))))) return 'already-there';
      if (!isGone(error)) throw storeError(operation, to, error);
      if (!(await exists(ctx.fs, from))) return 'source-gone';
      // The folder went between our check and the move: make it again.
    }
  }
  throw new StoreError(`${operation}: ${ctx.paths.waitingFolder(folder)} keeps being removed under this writer`);
}

/**
 * Publishes `text` as `waiting/<folder>/<name>` only if nothing is there yet (temp + `link`);
 * false when it was already queued. With `mtime`, the file carries it from the moment it appears.
 */
export async function publishWaiting(
  ctx: StoreContext,
  folder: string,
  name: string,
  text: string,
  options: { stem: string; operation: string; mtime?: Date; made?: (folder: string) => void },
): Promise<boolean> {
  const temp = tempPath(ctx, options.stem);
  await writeDurable(ctx, temp, text, options.operation, options.mtime);
  try {
    const outcome = await intoWaitingFolder(ctx, temp, folder, name, 'link', options.operation, options.made);
    if (outcome === 'source-gone') throw new StoreError(`${options.operation}: its temp ${temp} vanished before it was published`);
    return outcome === 'moved';
  } finally {
    await removeQuietly(ctx.fs, temp);
  }
}
