import { mapBounded } from './bounded.js';
import type { StoreContext } from './store-context.js';
import { isGone, storeError } from './store-fs.js';

/**
 * The lifecycle moves. Each is one atomic `rename` or `unlink` per file; a file that is not
 * where it should be was moved by someone else (a lost race, or a late call after a
 * takeover) and is skipped, never an error. Each returns the names it actually moved.
 */

/** waiting/ → running/<lockName>/. The caller holds the lock, so the folder exists. */
export function claimTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  return renameEach(ctx, names, 'claim task', (name) => [ctx.paths.waitingFile(name), ctx.paths.claimedFile(lockName, name)]);
}

/**
 * running/<lockName>/ → waiting/. Rename keeps the first-enqueue mtime; if the same task
 * was queued again meanwhile, replacing it with identical content and the older mtime is right.
 */
export function resetTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  return renameEach(ctx, names, 'reset task', (name) => [ctx.paths.claimedFile(lockName, name), ctx.paths.waitingFile(name)]);
}

export async function finishTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  const removed = await mapBounded(names, ctx.concurrency, (name) =>
    unlinkTolerant(ctx, ctx.paths.claimedFile(lockName, name), 'finish task'),
  );
  return names.filter((_, i) => removed[i]);
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

async function renameEach(
  ctx: StoreContext,
  names: readonly string[],
  operation: string,
  paths: (name: string) => [from: string, to: string],
): Promise<string[]> {
  const moved = await mapBounded(names, ctx.concurrency, async (name) => {
    const [from, to] = paths(name);
    try {
      await ctx.fs.rename(from, to);
      return true;
    } catch (error) {
      if (isGone(error)) return false;
      throw storeError(operation, from, error);
    }
  });
  return names.filter((_, i) => moved[i]);
}
