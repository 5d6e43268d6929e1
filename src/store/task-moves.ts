import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import { loadTask, lstatTolerant, readdirStrict, readdirTolerant } from './store-listing.js';
import type { ReadAhead } from './read-ahead.js';
import { isTaskFileName, OWNER_RECORD_NAME, parseWaitingFolderName, waitingFolderName } from './store-paths.js';
import type { ClaimedTask, WaitingTask } from './store-types.js';
import { intoWaitingFolder, waitingFolderOf } from './waiting-folder.js';
import type { StoreContext } from './store-context.js';
import { storeError } from './store-fs.js';
import { errnoName, isGone, isPathGone } from '../runtime/errno.js';

/** One step of a batch of moves or removals: each is a single atomic system call. */
export type FileOp =
  | { readonly op: 'rename'; readonly from: string; readonly to: string }
  | { readonly op: 'unlink'; readonly path: string }
  | { readonly op: 'rmdir'; readonly path: string };

/**
 * The lifecycle moves. Each is one atomic `rename` or `unlink` per file; a file that is not
 * where it should be was moved by someone else (a lost race, or a late call after a
 * takeover) and is skipped, never an error. Each returns the names it actually moved.
 */

/**
 * Every task of the URI's waiting folders (both lanes) → `running/<lockName>/`, then read. The
 * caller holds the URI's lock, so the claim folder exists and no other claim races this one;
 * publishers may, and what they add after the `readdir` stays for the next push. An emptied
 * folder is removed (ENOTEMPTY: an update just arrived). `leasedFolder` is the waiting folder the
 * lock renamed into place as the claim folder: its tasks are there already, and what is not a task
 * (nor the lock's own files) goes back to it. Returns the tasks claimed and read (unreadable ones
 * are quarantined), and the folders claimed from. A task in `early` (read ahead) costs an `lstat`
 * instead of a read when the claimed file is the one read.
 */
export async function claimUri(
  ctx: StoreContext,
  lockName: string,
  uriKey: string,
  early: ReadAhead,
  leasedFolder?: string,
): Promise<{ tasks: ClaimedTask[]; folders: string[] }> {
  const claimDir = ctx.paths.lockFolder(lockName);
  const tasks: ClaimedTask[] = [];
  const folders: string[] = [];
  for (const lane of ['live', 'bulk'] as const) {
    const folder = waitingFolderName(uriKey, lane);
    const moved = folder === leasedFolder ? await tasksMovedIn(ctx, claimDir, folder) : await moveInto(ctx, claimDir, folder);
    if (moved === undefined) continue;
    folders.push(folder);
    tasks.push(...(await loadClaimed(ctx, claimDir, folder, moved, early)));
  }
  return { tasks, folders };
}

/** `rename` each task of `waiting/<folder>` into the claim folder, then remove the emptied folder; the names moved. */
async function moveInto(ctx: StoreContext, claimDir: string, folder: string): Promise<string[] | undefined> {
  const dir = ctx.paths.waitingFolder(folder);
  const names = (await readdirTolerant(ctx, dir, 'claim task'))?.filter(isTaskFileName);
  if (names === undefined) return undefined;
  const ops: FileOp[] = names.map((name) => ({ op: 'rename', from: join(dir, name), to: join(claimDir, name) }));
  // Refused by what stands at the target (a folder planted under a task's name in one lane, a
  // task of that name claimed from the other): that entry stays, for the listing to read and
  // quarantine, and the URI's other tasks are claimed.
  const done = doneOrGone('claim task', ops, await runFileOps(ctx, ops), ['ENOTDIR', 'EISDIR', 'ENOTEMPTY', 'EEXIST']);
  await ctx.fs.rmdir(dir).catch(() => undefined);
  return names.filter((_, i) => done[i]);
}

/** The tasks of a waiting folder that became the claim folder; anything else in it goes back. */
async function tasksMovedIn(ctx: StoreContext, claimDir: string, folder: string): Promise<string[] | undefined> {
  let entries: string[];
  try {
    entries = await ctx.fs.readdir(claimDir);
  } catch (error) {
    if (isPathGone(error)) return undefined; // taken over: nothing here is ours
    throw storeError('claim task', claimDir, error);
  }
  // What is not a task never fails the push: left here if it cannot go back, it keeps the folder
  // from retiring, and the release moves the folder aside as a tombstone the lock recovery clears.
  await giveBackToWaiting(ctx, claimDir, folder, (name) => isTaskFileName(name), entries).catch(() => undefined);
  return entries.filter(isTaskFileName);
}

/**
 * Entries of a claim folder made from `waiting/<folder>` that `keep` does not want (and that are
 * not the lock's own files: its owner record, dot files) → back into `waiting/<folder>/`, where
 * they came from (made again when missing). Used for what is not a task when claiming, and for
 * tasks that arrived after the claim read the folder (a network filesystem's client may still
 * link into a folder it looked up before the rename) or were never claimed (the job stopped
 * first). `entries` saves a listing the caller already made. Returns the names moved back.
 */
export async function giveBackToWaiting(
  ctx: StoreContext,
  claimDir: string,
  folder: string,
  keep: (name: string) => boolean,
  entries?: readonly string[],
): Promise<string[]> {
  let names: readonly string[];
  try {
    names = entries ?? (await ctx.fs.readdir(claimDir));
  } catch (error) {
    if (isPathGone(error)) return [];
    throw storeError('put back task', claimDir, error);
  }
  const back = names.filter((name) => !keep(name) && name !== OWNER_RECORD_NAME && !name.startsWith('.'));
  const moved = await mapBounded(
    back,
    ctx.concurrency,
    async (name) => (await intoWaitingFolder(ctx, join(claimDir, name), folder, name, 'rename', 'put back task')) === 'moved',
  );
  return back.filter((_, i) => moved[i]);
}

/** Claimed task files: those read ahead from `folder` and still the same file are `lstat`ed, the rest read. */
async function loadClaimed(ctx: StoreContext, claimDir: string, folder: string, names: readonly string[], early: ReadAhead): Promise<WaitingTask[]> {
  const loaded = await mapBounded(names, ctx.concurrency, async (name) => {
    if (early.has(folder, name)) {
      const stats = await lstatTolerant(ctx, join(claimDir, name), 'claim task');
      if (stats === undefined) return undefined;
      const same = early.matching(folder, name, stats);
      if (same !== undefined) return same;
    }
    return loadTask(ctx, claimDir, name);
  });
  return loaded.filter((task): task is WaitingTask => task !== undefined);
}

/** The task file names in the waiting folders of `uriKeys` (both lanes), or of every URI. */
export async function waitingNamesOf(ctx: StoreContext, uriKeys?: Iterable<string>): Promise<Set<string>> {
  const folders =
    uriKeys === undefined
      ? (await readdirStrict(ctx, ctx.paths.waiting, 'list waiting tasks')).filter((name) => parseWaitingFolderName(name) !== undefined)
      : [...uriKeys].flatMap((key) => [waitingFolderName(key, 'live'), waitingFolderName(key, 'bulk')]);
  const listed = await mapBounded(folders, ctx.concurrency, (folder) => readdirTolerant(ctx, ctx.paths.waitingFolder(folder), 'list waiting tasks'));
  return new Set(listed.flatMap((names) => (names ?? []).filter(isTaskFileName)));
}

/** Which of the task file `names` wait flat at the top of waiting/, not sorted into their folder yet (DESIGN.md "Strays"). */
export async function flatWaitingNames(ctx: StoreContext, names: Iterable<string>): Promise<Set<string>> {
  const candidates = [...names].filter(isTaskFileName);
  const present = await mapBounded(
    candidates,
    ctx.concurrency,
    async (name) => (await lstatTolerant(ctx, join(ctx.paths.waiting, name), 'list waiting tasks')) !== undefined,
  );
  return new Set(candidates.filter((_, i) => present[i]));
}

/**
 * running/<lockName>/ → the waiting folder of each task's URI and lane, made again when a claim
 * removed it. Rename keeps the first-enqueue mtime; if the same task was queued again meanwhile,
 * replacing it with identical content and the older mtime is right.
 */
export async function resetTasks(ctx: StoreContext, lockName: string, tasks: readonly WaitingTask[]): Promise<string[]> {
  const claimDir = ctx.paths.lockFolder(lockName);
  const moved = await mapBounded(
    tasks,
    ctx.concurrency,
    async ({ name, task }) => (await intoWaitingFolder(ctx, join(claimDir, name), waitingFolderOf(task), name, 'rename', 'reset task')) === 'moved',
  );
  return tasks.filter((_, i) => moved[i]).map(({ name }) => name);
}

/** Removes pushed tasks from their claim folder; returns the names removed here (not already gone). */
export async function finishTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  const ops: FileOp[] = ctx.paths.claimedFiles(lockName, names).map((path) => ({ op: 'unlink', path }));
  const done = doneOrGone('finish task', ops, await runFileOps(ctx, ops));
  return names.filter((_, i) => done[i]);
}

/** True when this call removed the file; false when it was already gone. */
export async function unlinkTolerant(ctx: StoreContext, path: string, operation: string): Promise<boolean> {
  try {
    await ctx.fs.unlink(path);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw storeError(operation, path, error);
  }
}

/** Renames `from` to `to`; false when `from` is gone (a peer moved it first). */
export async function renameTolerant(ctx: StoreContext, from: string, to: string, operation: string): Promise<boolean> {
  try {
    await ctx.fs.rename(from, to);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw storeError(operation, from, error);
  }
}

/** Removes the emptied `failed/<uriKey>` folders of these URIs; one still holding tasks, or gone, stays as it is. */
export async function removeEmptiedFailedFolders(ctx: StoreContext, uriKeys: Iterable<string>): Promise<void> {
  for (const key of new Set(uriKeys)) await ctx.fs.rmdir(ctx.paths.failedFolder(key)).catch(() => undefined);
}

/**
 * Per op, whether it was done. An op whose path was already gone (another node's move), or that
 * failed with one of the `tolerated` codes, counts as not done; any other failure is a
 * StoreError naming the op's path.
 */
export function doneOrGone(operation: string, ops: readonly FileOp[], results: readonly unknown[], tolerated: readonly string[] = []): boolean[] {
  return ops.map((op, i) => {
    const error = results[i];
    if (error === undefined) return true;
    if (isGone(error) || tolerated.includes(errnoName(error) ?? '')) return false;
    throw storeError(operation, op.op === 'rename' ? op.from : op.path, error);
  });
}

/** Each op's error, or undefined when it was done; one call each, with bounded concurrency. */
export async function runFileOps(ctx: Pick<StoreContext, 'fs' | 'concurrency'>, ops: readonly FileOp[]): Promise<Array<unknown>> {
  return mapBounded(ops, ctx.concurrency, async (op) => {
    try {
      if (op.op === 'rename') await ctx.fs.rename(op.from, op.to);
      else if (op.op === 'rmdir') await ctx.fs.rmdir(op.path);
      else await ctx.fs.unlink(op.path);
      return undefined;
    } catch (error) {
      return error;
    }
  });
}
