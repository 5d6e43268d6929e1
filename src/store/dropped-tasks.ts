import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import { listFailed, makeFolder } from './failed-tasks.js';
import { replaceAtomic } from './publish.js';
import type { StoreContext } from './store-context.js';
import { removeQuietly, storeError } from './store-fs.js';
import { lstatTolerant, readdirListed, readdirTolerant } from './store-listing.js';
import { DROPPED_RECORD_NAME } from './store-paths.js';
import type { FailedTask } from './store-types.js';
import { doneOrGone, type FileOp, removeEmptiedFailedFolders, renameTolerant, runFileOps } from './task-moves.js';

/** Who drops failed tasks: `user@host` or the HTTP client, through which door, on which node. */
export interface DropActor {
  readonly by: string;
  readonly via: 'cli' | 'http' | 'verify';
  /** The node that dropped them, when a node did (the page) or the config names one (the CLI). */
  readonly nodeId?: string;
}

export interface DroppedRecord extends DropActor {
  readonly version: 1;
  /** Epoch ms on the dropping machine's clock. */
  readonly droppedAt: number;
}

export interface DropOutcome {
  /** The drop folder's name under failed/dropped/; undefined when nothing was dropped. */
  readonly folder: string | undefined;
  readonly dropped: readonly FailedTask[];
}

/** `20260101T120000Z.<token>`: sorts by time, and can never be a 40-hex `<uriKey>`. */
export const DROP_FOLDER_PATTERN = /^\d{8}T\d{6}Z\.[A-Za-z0-9]+$/;

/** A busy sweep takes at most this many drop folders; the rest go at the next one. */
const SWEEP_MAX_FOLDERS = 256;

export function dropFolderName(droppedAt: number, token: string): string {
  return `${new Date(droppedAt)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z')}.${token}`;
}

/** The text of `dropped.json`, in this key order. */
export function droppedRecordText(actor: DropActor, droppedAt: number): string {
  const record: DroppedRecord = { version: 1, droppedAt, by: actor.by, via: actor.via, ...(actor.nodeId === undefined ? {} : { nodeId: actor.nodeId }) };
  return `${JSON.stringify(record)}\n`;
}

/** A dropped task's file in its drop folder: `<uriKey>.<taskKey>.json`, unique even for names a hand put in two URI folders. */
export function droppedTaskName(task: Pick<FailedTask, 'uriKey' | 'name'>): string {
  return `${task.uriKey}.${task.name}`;
}

/**
 * Moves the matching failed tasks, each with its reason, into one new drop folder under
 * failed/dropped/, where retry and listings never look and the daemons delete it after
 * `replication.retention`. The record of who dropped them is written first, so no dropped task
 * is without one; a crash before any task moved in leaves a folder the sweep removes. Each task
 * moves in one rename: a task another operator retried or dropped meanwhile is skipped.
 */
export async function dropFailed(ctx: StoreContext, filter: (task: FailedTask) => boolean, actor: DropActor): Promise<DropOutcome> {
  const matching = (await listFailed(ctx)).filter(filter);
  if (matching.length === 0) return { folder: undefined, dropped: [] };
  const droppedAt = ctx.clock.now();
  const name = dropFolderName(droppedAt, ctx.random.token());
  const folder = ctx.paths.droppedFolder(name);
  await makeFolder(ctx, ctx.paths.dropped);
  try {
    await ctx.fs.mkdir(folder);
  } catch (error) {
    throw storeError('create drop folder', folder, error);
  }
  await replaceAtomic(ctx, join(folder, DROPPED_RECORD_NAME), droppedRecordText(actor, droppedAt), `${name}.dropped`, 'write drop record');
  const moved = await mapBounded(matching, ctx.concurrency, async (failed) => {
    const to = join(folder, droppedTaskName(failed));
    if (!(await renameTolerant(ctx, ctx.paths.failedFile(failed.uriKey, failed.name), to, 'drop failed task'))) return false;
    await renameTolerant(ctx, ctx.paths.failedReasonFile(failed.uriKey, failed.name), `${to}.reason.json`, 'drop failed task');
    return true;
  });
  await removeEmptiedFailedFolders(
    ctx,
    matching.map((failed) => failed.uriKey),
  );
  const dropped = matching.filter((_, i) => moved[i]);
  if (dropped.length > 0) return { folder: name, dropped };
  // Every one went elsewhere first: a record of nothing would only confuse.
  await removeQuietly(ctx.fs, join(folder, DROPPED_RECORD_NAME));
  await ctx.fs.rmdir(folder).catch(() => undefined);
  return { folder: undefined, dropped: [] };
}

/**
 * Deletes drop folders last changed more than `retentionMs` ago (their mtime: the last task moved
 * in, on the store's clock, against this node's: skew shifts the retention by the skew). The
 * same rules as the done/ sweep: only names a drop makes, only real folders (`lstat`, never
 * through a symlink), files unlinked and the folder removed; a folder that keeps an entry (an
 * `.nfs*` file still open, or something refrelay never writes there), or that this node may not
 * list or change (EACCES, EPERM: a stranger's mode), stays for a later sweep and the others go.
 * Any node may sweep; a folder a peer removes first is a lost race. Returns how many went.
 */
export async function sweepDropped(ctx: StoreContext, retentionMs: number, maxFolders = SWEEP_MAX_FOLDERS): Promise<number> {
  const names = await readdirTolerant(ctx, ctx.paths.dropped, 'sweep dropped tasks');
  if (names === undefined) return 0; // no drop yet (the folder is made by the first one)
  const now = ctx.clock.now();
  const expired = (
    await mapBounded(
      names.filter((name) => DROP_FOLDER_PATTERN.test(name)),
      ctx.concurrency,
      async (name) => {
        const dir = ctx.paths.droppedFolder(name);
        const stats = await lstatTolerant(ctx, dir, 'sweep dropped tasks');
        if (stats === undefined || !stats.isDirectory() || now - stats.mtimeMs <= retentionMs) return undefined;
        const files = await readdirListed(ctx, dir, 'sweep dropped tasks');
        return files === undefined ? undefined : { dir, files };
      },
    )
  )
    .filter((folder) => folder !== undefined)
    .slice(0, maxFolders);
  const unlinks: FileOp[] = expired.flatMap(({ dir, files }) => files.map((file) => ({ op: 'unlink' as const, path: join(dir, file) })));
  // EISDIR / EPERM: a folder someone put there, which unlink cannot take. EACCES / EPERM: a folder
  // this node may not change. Either way that folder stays (rmdir: ENOTEMPTY) and the others go.
  doneOrGone('sweep dropped tasks', unlinks, await runFileOps(ctx, unlinks), ['EBUSY', 'EISDIR', 'EPERM', 'EACCES']);
  const rmdirs: FileOp[] = expired.map(({ dir }) => ({ op: 'rmdir', path: dir }));
  return doneOrGone('sweep dropped tasks', rmdirs, await runFileOps(ctx, rmdirs), ['ENOTEMPTY', 'EEXIST', 'EBUSY', 'EACCES', 'EPERM']).filter(Boolean).length;
}
