import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import { quarantine } from './quarantine.js';
import type { StoreContext } from './store-context.js';
import { storeError, type StoreStats } from './store-fs.js';
import { isGone, isPathGone } from '../runtime/errno.js';
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

/**
 * `waiting/` with a cache by file name. A published task file never changes, so a name
 * seen before needs no read: the warm pass is one `readdir` plus a map lookup per entry,
 * returning the cached (frozen) objects themselves.
 *
 * Known limit: a task finished and queued again between two passes keeps its name, so the
 * cache keeps the earlier mtime; the push is then due a little early, never lost.
 */
export class WaitingListing {
  private readonly cache = new Map<string, WaitingTask>();

  constructor(private readonly ctx: StoreContext) {}

  /** This node moved the file away; a later file with that name may have a new mtime. */
  forget(name: string): void {
    this.cache.delete(name);
  }

  /**
   * The last listing as this node knows it now: what `list()` saw, minus what this node has
   * claimed since. No I/O; tasks other nodes queued or took since then are not reflected.
   */
  cached(): WaitingTask[] {
    return [...this.cache.values()];
  }

  async names(): Promise<string[]> {
    const names = await this.readWaiting();
    return names.filter(isTaskFileName);
  }

  /** Entries in no particular order. */
  async list(): Promise<WaitingTask[]> {
    const names = await this.readWaiting();
    const cache = this.cache;
    const listed: WaitingTask[] = [];
    let misses: string[] | undefined;
    let hits = 0;
    for (const name of names) {
      const cached = cache.get(name);
      if (cached !== undefined) {
        listed.push(cached);
        hits++;
      } else if (isTaskFileName(name)) {
        (misses ??= []).push(name);
      }
    }
    if (hits !== cache.size) this.dropAbsent(names);
    if (misses !== undefined) {
      const dir = this.ctx.paths.waiting;
      const loaded = await mapBounded(misses, this.ctx.concurrency, (name) => loadTask(this.ctx, dir, name));
      for (const entry of loaded) {
        if (entry === undefined) continue;
        cache.set(entry.name, entry);
        listed.push(entry);
      }
    }
    return listed;
  }

  private async readWaiting(): Promise<string[]> {
    return readdirStrict(this.ctx, this.ctx.paths.waiting, 'list waiting tasks');
  }

  private dropAbsent(names: readonly string[]): void {
    const present = new Set(names);
    for (const name of this.cache.keys()) {
      if (!present.has(name)) this.cache.delete(name);
    }
  }
}
