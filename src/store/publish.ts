import { join } from 'node:path';
import type { StoreContext } from './store-context.js';
import { removeQuietly, storeError, type StoreFileHandle } from './store-fs.js';
import { errnoName, isGone } from '../runtime/errno.js';

/** A unique name in `building/`, so a crash leaves its debris in one known place. */
export function tempPath(ctx: StoreContext, stem: string): string {
  return join(ctx.paths.building, `${stem}.${ctx.nodeTag}.${ctx.random.token()}.tmp`);
}

/**
 * Wakes the nodes on this machine for tasks that reached waiting/ without a temp of their own
 * (`refrelay retry` links failed tasks back): a temp made and removed in building/, the folder
 * their watch follows. Best effort: the periodic listing finds the tasks anyway.
 */
export async function wakeLocalNodes(ctx: StoreContext): Promise<void> {
  const temp = tempPath(ctx, 'wake');
  let handle: StoreFileHandle;
  try {
    handle = await ctx.fs.open(temp, 'wx');
  } catch {
    return;
  }
  await handle.close().catch(() => undefined);
  await removeQuietly(ctx.fs, temp);
}

/**
 * Creates `path` (never an existing one), writes `text` and fsyncs it. `close` is checked
 * too, because NFS reports deferred write errors (ENOSPC, EDQUOT) there. On failure the
 * partial file is removed, so no half-written temp is left behind.
 */
export async function writeDurable(ctx: StoreContext, path: string, text: string, operation: string, mtime?: Date): Promise<void> {
  let handle: StoreFileHandle | undefined;
  let opened = false;
  try {
    handle = await ctx.fs.open(path, 'wx');
    opened = true;
    await handle.writeFile(text);
    if (mtime !== undefined) await handle.utimes(mtime, mtime);
    await handle.sync();
    const open = handle;
    handle = undefined;
    await open.close();
  } catch (error) {
    if (handle !== undefined) await handle.close().catch(() => undefined);
    // Only our own file: an EEXIST from `open` would otherwise remove someone else's.
    if (opened) await removeQuietly(ctx.fs, path);
    throw storeError(operation, path, error);
  }
}

/** Replaces `target` atomically (temp + rename): readers see the old or the new content, never a mix. */
export async function replaceAtomic(ctx: StoreContext, target: string, text: string, stem: string, operation: string): Promise<void> {
  const temp = tempPath(ctx, stem);
  await writeDurable(ctx, temp, text, operation);
  try {
    await ctx.fs.rename(temp, target);
  } catch (error) {
    await removeQuietly(ctx.fs, temp);
    throw storeError(operation, target, error);
  }
}

/**
 * Makes the new directory entries durable on a local filesystem. Some platforms and
 * network filesystems cannot fsync a directory; there the entry is already durable or
 * there is nothing better to do, so those refusals are ignored.
 */
export async function fsyncDirectory(ctx: StoreContext, dir: string, operation: string, options: { goneIsFine?: boolean } = {}): Promise<void> {
  let handle: StoreFileHandle | undefined;
  try {
    handle = await ctx.fs.open(dir, 'r');
    await handle.sync();
  } catch (error) {
    if (options.goneIsFine === true && isGone(error)) return;
    const code = errnoName(error);
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EBADF' && code !== 'EPERM' && code !== 'EACCES' && code !== 'ENOTSUP') {
      throw storeError(operation, dir, error);
    }
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
