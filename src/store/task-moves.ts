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
  const claimed = ctx.paths.claimedFiles(lockName, names);
  return renameEach(ctx, names, 'claim task', (name, i) => [ctx.paths.waitingFile(name), claimed[i]!]);
}

/**
 * running/<lockName>/ → waiting/. Rename keeps the first-enqueue mtime; if the same task
 * was queued again meanwhile, replacing it with identical content and the older mtime is right.
 */
export function resetTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  const claimed = ctx.paths.claimedFiles(lockName, names);
  return renameEach(ctx, names, 'reset task', (name, i) => [claimed[i]!, ctx.paths.waitingFile(name)]);
}

export async function finishTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  if (ctx.fs.runFileOps !== undefined) {
    const paths = ctx.paths.claimedFiles(lockName, names);
    const results = await ctx.fs.runFileOps(paths.map((path) => ({ op: 'unlink', path })));
    return names.filter((_, i) => doneOrGone(results[i], 'finish task', paths[i]!));
  }
  const removed = await mapBounded(names, ctx.concurrency, (name) =>
    unlinkTolerant(ctx, ctx.paths.claimedFile(lockName, name), 'finish task'),
  );
  return names.filter((_, i) => removed[i]);
}

/** True when the op was done, false when its file was already gone; any other error is thrown. */
function doneOrGone(error: NodeJS.ErrnoException | undefined, operation: string, path: string): boolean {
  if (error === undefined) return true;
  if (isGone(error)) return false;
  throw storeError(operation, path, error);
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
  paths: (name: string, index: number) => [from: string, to: string],
): Promise<string[]> {
  if (ctx.fs.runFileOps !== undefined) {
    const pairs = names.map(paths);
    const results = await ctx.fs.runFileOps(pairs.map(([from, to]) => ({ op: 'rename', from, to })));
    return names.filter((_, i) => doneOrGone(results[i], operation, pairs[i]![0]));
  }
  const moved = await mapBounded(names, ctx.concurrency, async (name, index) => {
    const [from, to] = paths(name, index);
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
