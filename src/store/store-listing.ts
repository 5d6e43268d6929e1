import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import { quarantine } from './quarantine.js';
import type { StoreContext } from './store-context.js';
import { storeError, type StoreStats } from './store-fs.js';
import { isGone, isPathGone, refusedErrno } from '../runtime/errno.js';
import { isTaskFileName } from './store-paths.js';
import type { WaitingTask } from './store-types.js';
import { readTaskFile } from './task-reader.js';

/**
 * The names in a folder found in a listing (a lock, claim, failed or done folder): undefined when
 * it vanished or is not a real folder. `lstat` first, because `readdir` follows a symlink, and
 * every later path through the link would read, move or delete files outside the store.
 */
export async function readdirTolerant(ctx: StoreContext, dir: string, operation: string): Promise<string[] | undefined> {
  try {
    if (!(await ctx.fs.lstat(dir)).isDirectory()) return undefined;
    return await ctx.fs.readdir(dir);
  } catch (error) {
    if (isPathGone(error)) return undefined;
    throw storeError(operation, dir, error);
  }
}

/**
 * `readdirTolerant` for the views (`status`, `failed list`, `retry`, `drop`): a folder this node
 * may not list (EACCES, EPERM: a stranger's mode 000) is left out like one that vanished, so it
 * costs its own entry, never the whole listing. Views never move it; recovery quarantines it.
 */
export async function readdirListed(ctx: StoreContext, dir: string, operation: string): Promise<string[] | undefined> {
  const names = await readdirOrRefused(ctx, dir, operation);
  return Array.isArray(names) ? names : undefined;
}

/** `readdirTolerant`, with a folder this node may not list told apart: `{ refused: 'EACCES' | 'EPERM' }`. */
export async function readdirOrRefused(ctx: StoreContext, dir: string, operation: string): Promise<string[] | undefined | { refused: string }> {
  try {
    return await readdirTolerant(ctx, dir, operation);
  } catch (error) {
    const code = refusedErrno(error);
    if (code !== undefined) return { refused: code };
    throw error;
  }
}

/** `lstat` of an entry found in a listing: undefined when it vanished meanwhile. */
export async function lstatTolerant(ctx: StoreContext, path: string, operation: string): Promise<StoreStats | undefined> {
  try {
    return await ctx.fs.lstat(path);
  } catch (error) {
    if (isGone(error)) return undefined;
    throw storeError(operation, path, error);
  }
}

/**
 * For the store's own top-level folders, which nobody removes: a missing one means the
 * store is gone (unmounted, wiped), and an empty answer would hide that.
 */
export async function readdirStrict(ctx: StoreContext, dir: string, operation: string): Promise<string[]> {
  try {
    return await ctx.fs.readdir(dir);
  } catch (error) {
    throw storeError(operation, dir, error);
  }
}

/** The entries among `names` in `dir` still there, oldest (by mtime) first. */
export async function oldestFirst(ctx: StoreContext, dir: string, names: readonly string[]): Promise<string[]> {
  const ages = await mapBounded(names, ctx.concurrency, async (name) => ({ name, stats: await lstatTolerant(ctx, join(dir, name), 'list waiting tasks') }));
  return ages
    .filter((entry) => entry.stats !== undefined)
    .sort((a, b) => a.stats!.mtimeMs - b.stats!.mtimeMs)
    .map((entry) => entry.name);
}

/** One task file as a listing entry; undefined when it vanished or was quarantined. */
export async function loadTask(ctx: StoreContext, dir: string, name: string): Promise<WaitingTask | undefined> {
  const path = join(dir, name);
  const outcome = await readTaskFile(ctx.fs, path);
  if (outcome.kind === 'gone') return undefined;
  if (outcome.kind === 'corrupt') {
    await quarantine(ctx, path, name, outcome.reason);
    return undefined;
  }
  return Object.freeze({ name, key: name.slice(0, -'.json'.length), task: outcome.task, mtimeMs: outcome.mtimeMs });
}

/** The task files among `names` (other entries are not ours and stay untouched). */
export async function loadTasks(ctx: StoreContext, dir: string, names: readonly string[]): Promise<WaitingTask[]> {
  const taskNames = names.filter(isTaskFileName);
  const loaded = await mapBounded(taskNames, ctx.concurrency, (name) => loadTask(ctx, dir, name));
  return loaded.filter((entry): entry is WaitingTask => entry !== undefined);
}
