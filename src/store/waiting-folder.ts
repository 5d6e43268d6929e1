import { basename, join } from 'node:path';
import { StoreError, WaitingFolderRefusedError } from '../errors.js';
import { entryType } from '../runtime/bounded-read.js';
import { errnoName, isGone } from '../runtime/errno.js';
import { laneOfTask, uriKey, type Task } from '../task/task.js';
import { seenAsClaimed } from './claimed-view.js';
import { fsyncDirectory } from './publish.js';
import { quarantine } from './quarantine.js';
import type { StoreContext } from './store-context.js';
import { exists, storeError } from './store-fs.js';
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
      throw new WaitingFolderRefusedError(`${operation}: ${dir} is ${entryType(stats)}, not a folder; refusing to write through it`, dir);
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
    // A rename moves the only copy: one that landed among claimed tasks could be swept from done/
    // before it is moved out again, so it goes to the top at once while the folder looks claimed.
    if (how === 'rename' && (await seenAsClaimed(ctx, folder))) return intoWaitingTop(ctx, from, folder, name, how, operation);
    try {
      if (how === 'link') await ctx.fs.link(from, to);
      else await ctx.fs.rename(from, to);
    } catch (error) {
      if (how === 'link' && (await nameTaken(ctx, error, to))) {
        // Queued already, unless the folder this client sees is one a claim took: the task there
        // may have been pushed with refs read before this update.
        if (await seenAsClaimed(ctx, folder)) return intoWaitingTop(ctx, from, folder, name, how, operation);
        if (await holdsThisTask(ctx, to, from)) return 'already-there';
        continue; // Gone meanwhile, or something else that is now in corrupt/: link again.
      }
      if (!isGone(error)) throw storeError(operation, to, error);
      if (!(await exists(ctx.fs, from))) return 'source-gone';
      continue; // The folder went between our check and the move: make it again.
    }
    // Landed among claimed tasks, which are pushed already or about to be swept from done/. (A
    // link's source is still there; a rename that got here raced the claim that made it stale.)
    return (await seenAsClaimed(ctx, folder)) ? intoWaitingTop(ctx, how === 'link' ? from : to, folder, name, how, operation) : 'moved';
  }
  throw new StoreError(`${operation}: ${ctx.paths.waitingFolder(folder)} keeps being removed under this writer`);
}

/**
 * Whether the entry holding a task's name at `to` is that task, as `from` is. A task's name is the
 * hash of its bytes, so a regular file of the same size is it; anything else there (garbage a
 * person or a crash left, a FIFO) would be quarantined by the next listing and the update lost:
 * it is moved to corrupt/ (false), and one that cannot be moved refuses the name. Gone meanwhile
 * (claimed, swept): false, for the caller to link again (at worst one more push).
 */
async function holdsThisTask(ctx: StoreContext, to: string, from: string): Promise<boolean> {
  const [there, ours] = await Promise.all([ctx.fs.lstat(to).catch(() => undefined), ctx.fs.lstat(from).catch(() => undefined)]);
  if (there === undefined) return false;
  if (ours === undefined) return true; // Our source went (a peer retried it first): nothing to compare with.
  if (there.isFile() && there.size === ours.size) return true;
  const what = there.isFile() ? `a file of ${there.size} bytes` : entryType(there);
  if (await quarantine(ctx, to, basename(to), `${what} under a task's name, whose file is ${ours.size} bytes`)) return false;
  if (!(await exists(ctx.fs, to))) return false;
  throw new WaitingFolderRefusedError(`${to} holds something other than the task of that name, and it could not be moved to corrupt/`, to);
}

/** EEXIST from a `link`: the name is taken (sshfs reports that as EPERM). */
async function nameTaken(ctx: StoreContext, error: unknown, to: string): Promise<boolean> {
  const code = errnoName(error);
  return code === 'EEXIST' || (code === 'EPERM' && (await exists(ctx.fs, to)));
}

/**
 * The task at the top of waiting/ instead, as a flat file every node's listing sorts into its
 * folder (DESIGN.md "Strays"): waiting/ itself never moves, so no stale lookup can misplace it.
 * `from` is the task's source (a temp, a failed/ or claimed file), or for a rename that raced a
 * claim, the task where it landed among the claimed ones.
 */
async function intoWaitingTop(ctx: StoreContext, from: string, folder: string, name: string, how: 'link' | 'rename', operation: string): Promise<IntoWaiting> {
  const to = join(ctx.paths.waiting, name);
  let outcome: IntoWaiting = 'moved';
  for (let attempt = 0; ; attempt++) {
    try {
      if (how === 'link') await ctx.fs.link(from, to);
      else await ctx.fs.rename(from, to);
    } catch (error) {
      if (how === 'link' && (await nameTaken(ctx, error, to))) {
        // Something else there is set aside once; a name taken again meanwhile is this task's.
        if (attempt === 0 && !(await holdsThisTask(ctx, to, from))) continue;
        outcome = 'already-there';
      } else if (!isGone(error)) throw storeError(operation, to, error);
      else return 'source-gone'; // another node moved it first
    }
    break;
  }
  if (outcome === 'moved') await fsyncDirectory(ctx, ctx.paths.waiting, operation);
  ctx.onEvent({ type: 'stale-waiting-folder', path: ctx.paths.waitingFolder(folder), movedTo: to });
  return outcome;
}
