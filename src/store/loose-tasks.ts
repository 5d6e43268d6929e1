import { join } from 'node:path';
import { entryType } from '../runtime/bounded-read.js';
import { errnoName, isGone } from '../runtime/errno.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { taskKey, type Task } from '../task/task.js';
import { seenAsClaimed } from './claimed-view.js';
import { quarantine } from './quarantine.js';
import type { StoreContext } from './store-context.js';
import { storeError } from './store-fs.js';
import { lstatTolerant } from './store-listing.js';
import { isTaskFileName, parseWaitingFolderName } from './store-paths.js';
import { readTaskFile } from './task-reader.js';
import { renameTolerant } from './task-moves.js';
import { waitingFolderOf } from './waiting-folder.js';

/** An entry of `waiting/` left where it is, and why. `task`: a readable task file, which is not pushed while it stays there. */
export interface LeftEntry {
  readonly name: string;
  readonly reason: string;
  readonly task: boolean;
}

/** What sorting flat `waiting/<taskKey>.json` files into their folders did. */
export interface SortReport {
  /** Renamed into `waiting/<uriKey>[.bulk]/`, mtime kept. */
  readonly moved: number;
  /** Already queued under the same name in their folder: one copy, the older, stays. */
  readonly duplicates: number;
  /** Unreadable: moved to `corrupt/` with the reason. */
  readonly quarantined: number;
  /** Left in place; `left` says which and why. */
  readonly skipped: number;
  readonly left: readonly LeftEntry[];
}

type Outcome = { readonly kind: 'moved' | 'duplicate' | 'quarantined' | 'gone' } | { readonly kind: 'left'; readonly reason: string; readonly task: boolean };

/** A folder a claimer empties and removes between our `mkdir` and `rename` is made again this many times. */
const PLACE_ATTEMPTS = 3;

const MOVED: Outcome = { kind: 'moved' };
const DUPLICATE: Outcome = { kind: 'duplicate' };
const GONE: Outcome = { kind: 'gone' };

/**
 * Sorts the flat task files `names` of `waiting/` (the format 1 layout) into the folders of their
 * URI and lane (DESIGN.md "Waiting folders (layout 2)"). Each file is one `rename`, so it is in
 * exactly one place at every moment and a run cut short is finished by the next one; peers
 * sorting the same files at once lose races harmlessly (ENOENT). Only a regular file is read (never
 * through a symlink); any other entry is left alone and reported, an unreadable file is quarantined.
 */
export async function sortLooseTasks(ctx: StoreContext, names: readonly string[], options: SortOptions = {}): Promise<SortReport> {
  const outcomes = await mapBounded(names, ctx.concurrency, (name) => sortOne(ctx, name, options.placed));
  return report(names, outcomes);
}

export interface SortOptions {
  /** Hears of each folder a task went into (moved, or settled as a duplicate): what a node learned of it is out of date. */
  readonly placed?: (folder: string) => void;
}

/** Lists `waiting/` and sorts every flat task file in it; other names that are not URI folders are reported as left. */
export async function sortWaiting(ctx: StoreContext): Promise<SortReport> {
  let names: string[];
  try {
    names = await ctx.fs.readdir(ctx.paths.waiting);
  } catch (error) {
    throw storeError('list waiting tasks', ctx.paths.waiting, error);
  }
  // Folder names are the layout itself: not even looked at, there may be a million of them.
  const rest = names.filter((name) => parseWaitingFolderName(name) === undefined);
  return sortLooseTasks(ctx, rest);
}

function report(names: readonly string[], outcomes: readonly Outcome[]): SortReport {
  const count = (kind: Outcome['kind']): number => outcomes.filter((outcome) => outcome.kind === kind).length;
  const left = outcomes.flatMap((outcome, i) => (outcome.kind === 'left' ? [{ name: names[i]!, reason: outcome.reason, task: outcome.task }] : []));
  return { moved: count('moved'), duplicates: count('duplicate'), quarantined: count('quarantined'), skipped: left.length, left };
}

async function sortOne(ctx: StoreContext, name: string, placed: (folder: string) => void = () => undefined): Promise<Outcome> {
  if (!isTaskFileName(name)) return { kind: 'left', reason: 'not a task file name', task: false };
  const path = join(ctx.paths.waiting, name);
  const stats = await lstatTolerant(ctx, path, 'sort waiting task');
  if (stats === undefined) return GONE;
  if (!stats.isFile()) return { kind: 'left', reason: entryType(stats), task: false };
  const read = await readTaskFile(ctx.fs, path);
  if (read.kind === 'gone') return GONE;
  if (read.kind === 'corrupt') {
    if (await quarantine(ctx, path, name, read.reason)) return { kind: 'quarantined' };
    return (await lstatTolerant(ctx, path, 'sort waiting task')) === undefined
      ? GONE
      : { kind: 'left', reason: `unreadable (${read.reason}); could not be moved to corrupt/`, task: false };
  }
  const folder = waitingFolderOf(read.task);
  for (let attempt = 0; attempt < PLACE_ATTEMPTS; attempt++) {
    const outcome = await place(ctx, name, folder, read.task, read.mtimeMs);
    if (outcome === MOVED || outcome === DUPLICATE) placed(folder);
    if (outcome !== 'again') return outcome;
  }
  return { kind: 'left', reason: `its folder waiting/${folder} kept disappearing`, task: true };
}

/**
 * One try at moving `waiting/<name>` into `waiting/<folder>/`. 'again': the folder or the copy
 * standing in it went away meanwhile (a claim), so the next try starts over.
 */
async function place(ctx: StoreContext, name: string, folder: string, task: Task, mtimeMs: number): Promise<Outcome | 'again'> {
  const from = join(ctx.paths.waiting, name);
  const to = ctx.paths.waitingFile(folder, name);
  const blocked = await makeFolder(ctx, ctx.paths.waitingFolder(folder));
  // A symlink there would take the task out of the store; a file there is nobody's to remove.
  if (blocked !== undefined) return { kind: 'left', reason: `waiting/${folder} is ${blocked}, not a folder`, task: true };
  // Neither a copy standing there nor a move into it can be trusted while this client sees the
  // folder a claim took (claimed-view.ts); the file stays flat until the view is fresh.
  if (await seenAsClaimed(ctx, folder)) return leftWhileSeenAsClaimed(folder);
  if ((await lstatTolerant(ctx, to, 'sort waiting task')) !== undefined) return settleDuplicate(ctx, name, folder, task, mtimeMs);
  try {
    await ctx.fs.rename(from, to);
  } catch (error) {
    if (!isGone(error)) throw storeError('sort waiting task', from, error);
    // Gone from here: a peer sorted it. Else the folder went (a claimer emptied and removed it).
    return (await lstatTolerant(ctx, from, 'sort waiting task')) === undefined ? GONE : 'again';
  }
  if (!(await seenAsClaimed(ctx, folder))) return MOVED;
  // Claimed between the look and the move, and seen through a stale lookup: back to the top.
  // Gone from there already: that claim took it, or gave it back to a fresh folder.
  return (await renameTolerant(ctx, to, from, 'sort waiting task')) ? leftWhileSeenAsClaimed(folder) : GONE;
}

function leftWhileSeenAsClaimed(folder: string): Outcome {
  return {
    kind: 'left',
    reason: `waiting/${folder} is seen here as a folder a claim took (a stale lookup on a network filesystem); tried again later`,
    task: true,
  };
}

/**
 * The same name is queued in the folder already (a peer published it again after a crash, or an
 * earlier run of ours was cut short). It is the same task only if its content says so; then the
 * copy with the older mtime, the first enqueue, stays: the flat one replaces the other in one
 * rename, or is removed. A different task under that name is left for a person to look at.
 */
async function settleDuplicate(ctx: StoreContext, name: string, folder: string, task: Task, mtimeMs: number): Promise<Outcome | 'again'> {
  const from = join(ctx.paths.waiting, name);
  const to = ctx.paths.waitingFile(folder, name);
  const standing = await readTaskFile(ctx.fs, to);
  if (standing.kind === 'gone') return 'again';
  if (standing.kind === 'corrupt') {
    if (await quarantine(ctx, to, name, standing.reason)) return 'again';
    return { kind: 'left', reason: `waiting/${folder}/${name} is unreadable (${standing.reason}) and could not be moved to corrupt/`, task: true };
  }
  if (taskKey(standing.task) !== taskKey(task)) {
    return { kind: 'left', reason: `waiting/${folder}/${name} holds another task under the same name`, task: true };
  }
  try {
    if (mtimeMs < standing.mtimeMs) await ctx.fs.rename(from, to);
    else await ctx.fs.unlink(from);
    return DUPLICATE;
  } catch (error) {
    if (isGone(error)) return GONE;
    throw storeError('sort waiting task', from, error);
  }
}

/** Makes a waiting folder (EEXIST is fine when a folder stands there); what else stands there, if anything does. */
async function makeFolder(ctx: StoreContext, dir: string): Promise<string | undefined> {
  try {
    await ctx.fs.mkdir(dir);
    return undefined;
  } catch (error) {
    if (errnoName(error) !== 'EEXIST') throw storeError('create waiting folder', dir, error);
  }
  const stats = await lstatTolerant(ctx, dir, 'create waiting folder');
  // Removed right after our EEXIST: the rename finds no folder and the next try makes it.
  if (stats === undefined || stats.isDirectory()) return undefined;
  return entryType(stats);
}

/** A flat entry that is no regular file goes to corrupt/; a file left (its quarantine failed) stays. */
export async function moveAsideUnlessFile(ctx: StoreContext, name: string): Promise<void> {
  const path = join(ctx.paths.waiting, name);
  const stats = await lstatTolerant(ctx, path, 'list waiting tasks');
  if (stats === undefined || stats.isFile()) return;
  await quarantine(ctx, path, name, `${entryType(stats)} where a file is expected`);
}
