import { basename } from 'node:path';
import { StoreError } from '../errors.js';
import { entryType } from '../runtime/bounded-read.js';
import { quarantine } from './quarantine.js';
import { encodeTask, taskKey, uriKey, type Task } from '../task/task.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { replaceAtomic, wakeLocalNodes } from './publish.js';
import { intoWaitingFolder, waitingFolderOf } from './waiting-folder.js';
import type { StoreContext } from './store-context.js';
import { storeError } from './store-fs.js';
import { errnoName } from '../runtime/errno.js';
import { loadTask, readdirListed, readdirStrict } from './store-listing.js';
import { URI_KEY_PATTERN, isTaskFileName } from './store-paths.js';
import type { FailedTask, FailureReason, FailureRecord } from './store-types.js';
import { readJsonTolerant } from './task-reader.js';
import { removeEmptiedFailedFolders, renameTolerant, unlinkTolerant } from './task-moves.js';

/**
 * Moves claimed tasks to `failed/<uriKey>/` with a reason record. The task moves first:
 * a crash in between leaves a failed task without a reason (still listed, still
 * retryable), never a task that is in neither place. Returns the names moved.
 */
export async function failClaimed(ctx: StoreContext, lockName: string, names: readonly string[], reason: FailureReason): Promise<string[]> {
  const lockFolder = ctx.paths.lockFolder(lockName);
  const moved = await mapBounded(names, ctx.concurrency, async (name) => {
    const claimed = await loadTask(ctx, lockFolder, name);
    if (claimed === undefined) return false;
    const key = uriKey(claimed.task.uri);
    await makeFolder(ctx, ctx.paths.failedFolder(key));
    // Gone: taken over by another node meanwhile.
    if (!(await renameTolerant(ctx, ctx.paths.claimedFile(lockName, name), ctx.paths.failedFile(key, name), 'move task to failed'))) return false;
    await writeReason(ctx, key, name, reason);
    return true;
  });
  return names.filter((_, i) => moved[i]);
}

/** Parks a new task (e.g. only the rejected refs of a push) as failed, without touching waiting/. */
export async function parkFailed(ctx: StoreContext, task: Task, reason: FailureReason): Promise<{ uriKey: string; name: string }> {
  const key = uriKey(task.uri);
  const stem = taskKey(task);
  const name = `${stem}.json`;
  await makeFolder(ctx, ctx.paths.failedFolder(key));
  // Identical content under an identical name: replacing an earlier parked copy loses nothing.
  await replaceAtomic(ctx, ctx.paths.failedFile(key, name), encodeTask(task), stem, 'park failed task');
  await writeReason(ctx, key, name, reason);
  return { uriKey: key, name };
}

/** Every failed task, or those of the named URIs only (their folders alone are read). */
export async function listFailed(ctx: StoreContext, uriKeys?: Iterable<string>): Promise<FailedTask[]> {
  const folders = uriKeys === undefined ? await readdirStrict(ctx, ctx.paths.failed, 'list failed tasks') : [...uriKeys];
  const listed: FailedTask[] = [];
  // Folders one at a time, files with bounded concurrency: keeps the total in flight bounded.
  for (const key of folders) {
    if (!URI_KEY_PATTERN.test(key)) continue;
    const folder = ctx.paths.failedFolder(key);
    const names = ((await readdirListed(ctx, folder, 'list failed tasks')) ?? []).filter(isTaskFileName);
    const entries = await mapBounded(names, ctx.concurrency, async (name): Promise<FailedTask | undefined> => {
      const entry = await loadTask(ctx, folder, name);
      if (entry === undefined) return undefined;
      const record = await readJsonTolerant(ctx.fs, ctx.paths.failedReasonFile(key, name), 'read failure reason');
      return Object.freeze({ ...entry, uriKey: key, reason: asFailureRecord(record) });
    });
    for (const entry of entries) if (entry !== undefined) listed.push(entry);
  }
  return listed;
}

/**
 * Puts matching failed tasks back in `waiting/` by `link` (never overwriting a task queued
 * meanwhile: then the failed copy is simply dropped), then removes the failed copy and its
 * reason. A crash in between leaves a harmless duplicate, never a loss. Returns how many
 * tasks are back in the queue; when some are, the nodes on this machine are woken to push them
 * (a link into waiting/ is not the write their watch follows).
 */
export async function retryFailed(ctx: StoreContext, filter: (task: FailedTask) => boolean): Promise<number> {
  const matching = (await listFailed(ctx)).filter(filter);
  const back = await mapBounded(matching, ctx.concurrency, async (failed) => {
    const from = ctx.paths.failedFile(failed.uriKey, failed.name);
    // 'already-there': the same task was queued meanwhile, and the failed copy is simply dropped.
    const outcome = await intoWaitingFolder(ctx, from, waitingFolderOf(failed.task), failed.name, 'link', 'retry failed task');
    if (outcome === 'source-gone') return false; // Another node retried it first.
    await unlinkTolerant(ctx, from, 'retry failed task');
    await unlinkTolerant(ctx, ctx.paths.failedReasonFile(failed.uriKey, failed.name), 'retry failed task');
    return true;
  });
  await removeEmptiedFailedFolders(
    ctx,
    matching.map((failed) => failed.uriKey),
  );
  const moved = back.filter(Boolean).length;
  if (moved > 0) await wakeLocalNodes(ctx);
  return moved;
}

async function writeReason(ctx: StoreContext, key: string, name: string, reason: FailureReason): Promise<void> {
  const record: FailureRecord = {
    reason: reason.reason,
    at: ctx.clock.now(),
    nodeId: ctx.nodeId,
    ...(reason.attempts !== undefined ? { attempts: reason.attempts } : {}),
    ...(reason.refs !== undefined ? { refs: [...reason.refs] } : {}),
  };
  await replaceAtomic(ctx, ctx.paths.failedReasonFile(key, name), `${JSON.stringify(record)}\n`, `${name}.reason`, 'write failure reason');
}

/**
 * `failed/<uriKey>/` or `failed/dropped/`. failed/ itself is part of the layout: never made here,
 * so an unmounted store fails. An entry of that name that is not a real folder (a symlink would
 * take the failed tasks out of the store, where no one lists or retries them) is moved to corrupt/
 * and the folder made.
 */
export async function makeFolder(ctx: StoreContext, dir: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await ctx.fs.mkdir(dir);
      return;
    } catch (error) {
      if (errnoName(error) !== 'EEXIST') throw storeError('create folder', dir, error);
    }
    const stats = await ctx.fs.lstat(dir).catch(() => undefined);
    if (stats === undefined || stats.isDirectory()) return;
    if (attempt > 0) throw new StoreError(`create folder failed at ${dir}: ${entryType(stats)} stands there`);
    await quarantine(ctx, dir, basename(dir), `${entryType(stats)} where a failed-tasks folder is expected`);
  }
}

function asFailureRecord(value: unknown): FailureRecord | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.reason !== 'string') return undefined;
  return Object.freeze({
    reason: record.reason,
    at: typeof record.at === 'number' ? record.at : Number.NaN,
    nodeId: typeof record.nodeId === 'string' ? record.nodeId : '',
    ...(typeof record.attempts === 'number' ? { attempts: record.attempts } : {}),
    ...(Array.isArray(record.refs) ? { refs: record.refs.filter((ref): ref is string => typeof ref === 'string') } : {}),
  });
}
