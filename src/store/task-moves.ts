import { mapBounded } from '../runtime/map-bounded.js';
import type { StoreContext } from './store-context.js';
import { storeError } from './store-fs.js';
import { errnoName, isGone } from '../runtime/errno.js';

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

/** waiting/ → running/<lockName>/. The caller holds the lock, so the folder exists. */
export function claimTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  const claimed = ctx.paths.claimedFiles(lockName, names);
  return moveEach(
    ctx,
    names,
    'claim task',
    names.map((name, i) => ({ op: 'rename', from: ctx.paths.waitingFile(name), to: claimed[i]! })),
  );
}

/**
 * running/<lockName>/ → waiting/. Rename keeps the first-enqueue mtime; if the same task
 * was queued again meanwhile, replacing it with identical content and the older mtime is right.
 */
export function resetTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  const claimed = ctx.paths.claimedFiles(lockName, names);
  return moveEach(
    ctx,
    names,
    'reset task',
    names.map((name, i) => ({ op: 'rename', from: claimed[i]!, to: ctx.paths.waitingFile(name) })),
  );
}

export function finishTasks(ctx: StoreContext, lockName: string, names: readonly string[]): Promise<string[]> {
  return moveEach(
    ctx,
    names,
    'finish task',
    ctx.paths.claimedFiles(lockName, names).map((path) => ({ op: 'unlink', path })),
  );
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

/**
 * Runs `ops[i]` for `names[i]`. Returns the names whose op was done; a file already gone is
 * skipped, any other failure is a StoreError naming the op's path.
 */
async function moveEach(ctx: StoreContext, names: readonly string[], operation: string, ops: readonly FileOp[]): Promise<string[]> {
  const done = doneOrGone(operation, ops, await runFileOps(ctx, ops));
  return names.filter((_, i) => done[i]);
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
