import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import type { StoreContext } from './store-context.js';
import { isGone } from '../runtime/errno.js';
import { loadTasks, lstatTolerant, readdirListed, readdirOrRefused, readdirStrict, readdirTolerant } from './store-listing.js';
import { CORRUPT_REASON_SUFFIX, OWNER_RECORD_NAME, isPlainName, isTaskFileName } from './store-paths.js';
import type { ClaimedTask, NodeRecordFile, RunningLock } from './store-types.js';
import { doneOrGone, type FileOp, resetTasks, runFileOps, unlinkTolerant } from './task-moves.js';
import { readJsonTolerant, readRecord } from './task-reader.js';
import { quarantine } from './quarantine.js';
import { entryType } from '../runtime/bounded-read.js';

/** Lock folders read side by side; each one reads its own files with bounded concurrency too. */
const LOCKS_IN_FLIGHT = 4;

/** Every lock folder under `running/`; folders released while we look are skipped. */
export async function listRunning(ctx: StoreContext): Promise<RunningLock[]> {
  const entries = await readdirStrict(ctx, ctx.paths.running, 'list running tasks');
  const locks = await mapBounded(entries, LOCKS_IN_FLIGHT, async (lockName): Promise<RunningLock | undefined> => {
    // A name no lock has (a backslash in it) is a stranger's, as every foreign name in the store.
    if (lockName.startsWith('.') || !isPlainName(lockName)) return undefined;
    const dir = ctx.paths.lockFolder(lockName);
    const stats = await lstatTolerant(ctx, dir, 'list running tasks');
    if (stats === undefined || !stats.isDirectory()) return undefined;
    const names = await readdirOrRefused(ctx, dir, 'list running tasks');
    if (names === undefined) return undefined;
    if (!Array.isArray(names)) return Object.freeze({ lockName, ownerRecord: undefined, tasks: [], unreadable: 'whole', mtimeMs: stats.mtimeMs });
    // The owner record lives in the lease folder (`<lock>/<leaseId>/owner.json`); older layouts
    // kept it at the top of the lock folder.
    let ownerRecord = names.includes(OWNER_RECORD_NAME) ? await readJsonTolerant(ctx.fs, join(dir, OWNER_RECORD_NAME), 'read lock owner record') : undefined;
    let tasks = await loadTasks(ctx, dir, names);
    let unreadable: RunningLock['unreadable'] = false;
    for (const name of names) {
      if (name.startsWith('.') || name === OWNER_RECORD_NAME || name.endsWith('.json') || name.endsWith('.tmp')) continue;
      const inner = await readdirOrRefused(ctx, join(dir, name), 'list running tasks');
      if (inner === undefined) continue; // a file, or gone
      if (!Array.isArray(inner)) {
        unreadable = 'part';
        continue;
      }
      if (ownerRecord === undefined && inner.includes(OWNER_RECORD_NAME)) {
        ownerRecord = await readJsonTolerant(ctx.fs, join(dir, name, OWNER_RECORD_NAME), 'read lock owner record');
      }
      tasks = tasks.concat(await loadTasks(ctx, join(dir, name), inner));
    }
    return Object.freeze({ lockName, ownerRecord, tasks: Object.freeze(tasks), unreadable, mtimeMs: stats.mtimeMs });
  });
  return locks.filter((lock): lock is RunningLock => lock !== undefined);
}

/**
 * Put every task of a lock folder (and of the claim folders inside it) back to waiting/, then
 * remove the folder if nothing but bookkeeping files remain. Used on tombstones after a takeover,
 * on this node's own claims at start-up, and on abandoned empty tombstones. An entry there that
 * is not a real folder (a symlink planted as a lock) is never looked through: it is moved to
 * corrupt/ whole, the link itself.
 */
export async function recoverLockFolder(ctx: StoreContext, lockName: string): Promise<{ recovered: number; removed: boolean }> {
  const dir = ctx.paths.lockFolder(lockName);
  const stats = await lstatTolerant(ctx, dir, 'recover lock folder');
  if (stats === undefined) return { recovered: 0, removed: true };
  if (!stats.isDirectory()) {
    await quarantine(ctx, dir, lockName.replaceAll('/', '_'), `${entryType(stats)} where a lock folder is expected`);
    return { recovered: 0, removed: true };
  }
  const names = await readdirOrQuarantine(ctx, dir, lockName);
  if (names === undefined) return { recovered: 0, removed: true };
  // Each task goes back to its own URI's folder, as its content says (read here: unreadable
  // ones are quarantined); a task of another URI in a lock folder is then refused by that URI's claim.
  let recovered = (await resetTasks(ctx, lockName, await loadTasks(ctx, dir, names))).length;
  for (const name of names) {
    // A name no lease has is left to removeBookkeeping, which moves it to corrupt/.
    if (isTaskFileName(name) || lockName.includes('/') || name === OWNER_RECORD_NAME || !isPlainName(name)) continue;
    const inner = await readdirOrQuarantine(ctx, join(dir, name), `${lockName}/${name}`);
    if (inner === undefined) continue;
    recovered += (await resetTasks(ctx, `${lockName}/${name}`, await loadTasks(ctx, join(dir, name), inner))).length;
    await removeBookkeeping(ctx, join(dir, name), false);
  }
  return { recovered, removed: await removeBookkeeping(ctx, dir, !lockName.includes('/')) };
}

/** A lock or claim folder's names; one this node may not list (mode 000) would be recovered again on every pass: moved to corrupt/. */
async function readdirOrQuarantine(ctx: StoreContext, dir: string, lockPath: string): Promise<string[] | undefined> {
  const names = await readdirOrRefused(ctx, dir, 'recover lock folder');
  if (names === undefined || Array.isArray(names)) return names;
  await quarantine(ctx, dir, lockPath.replaceAll('/', '_'), `a lock folder this node may not read (${names.refused})`);
  return undefined;
}

/**
 * What NFS (`.nfsXXXX`) and FUSE (`.fuse_hiddenXXXX`) call a file unlinked or replaced while a
 * process on that client still had it open: an owner record a reader held. The client removes
 * it at close, unless the folder was renamed meanwhile by another client (a takeover): then,
 * on sshfs, it stays for good and the tombstone could never be removed.
 */
function isSillyRenamed(name: string): boolean {
  return name.startsWith('.nfs') || name.startsWith('.fuse_hidden');
}

/**
 * Remove owner records and temp files, then the folder; false when task files (or a claim
 * folder still in use) remain. What refrelay never writes there — a directory or a FIFO named
 * `owner.json`, a symlink, a stranger's file — could keep the folder for good and fail every
 * pass that tries: it is moved to corrupt/ with its reason instead. `withClaimFolders`: the
 * folder is a lock folder, whose sub-folders are claim folders recovered by the caller.
 */
async function removeBookkeeping(ctx: StoreContext, dir: string, withClaimFolders: boolean): Promise<boolean> {
  const names = (await readdirTolerant(ctx, dir, 'remove lock folder')) ?? [];
  for (const name of names) {
    if (isTaskFileName(name)) continue;
    const path = join(dir, name);
    // Still open on the client that removes it: EBUSY (NFS) or renamed again (FUSE); a later sweep retries.
    if (isSillyRenamed(name)) {
      await ctx.fs.unlink(path).catch(() => undefined);
      continue;
    }
    const stats = await lstatTolerant(ctx, path, 'remove lock folder');
    if (stats === undefined) continue;
    const ours = name === OWNER_RECORD_NAME || name.endsWith('.tmp');
    if (ours && stats.isFile()) await unlinkTolerant(ctx, path, 'remove lock folder');
    else if (!(withClaimFolders && stats.isDirectory() && !ours && isPlainName(name))) {
      await quarantine(ctx, path, name, `${entryType(stats)} named ${JSON.stringify(name)} in a lock folder, which refrelay never writes`);
    }
  }
  try {
    await ctx.fs.rmdir(dir);
    return true;
  } catch (error) {
    if (isGone(error)) return true;
    return false;
  }
}

/** The task files of one lock folder; owner records and other files there are not tasks. */
export async function listClaimed(ctx: StoreContext, lockName: string): Promise<ClaimedTask[]> {
  const dir = ctx.paths.lockFolder(lockName);
  const names = (await readdirTolerant(ctx, dir, 'list claimed tasks')) ?? [];
  return loadTasks(ctx, dir, names);
}

/** Entries moved aside to corrupt/, not counting their reason records. */
export async function countCorrupt(ctx: StoreContext): Promise<number> {
  const names = await readdirStrict(ctx, ctx.paths.corrupt, 'list corrupt entries');
  return names.filter((name) => !name.endsWith(CORRUPT_REASON_SUFFIX)).length;
}

async function nodeRecordNames(ctx: StoreContext): Promise<string[]> {
  const names = await readdirStrict(ctx, ctx.paths.nodes, 'list node records');
  return names.filter((name) => name.endsWith('.json') && !name.startsWith('.'));
}

/**
 * Node heartbeats with their files' mtimes (the store's clock: when each record was last
 * replaced), read through one descriptor each so content and mtime belong together.
 */
export async function readNodeRecordFiles(ctx: StoreContext): Promise<NodeRecordFile[]> {
  const files = await mapBounded(await nodeRecordNames(ctx), ctx.concurrency, async (name): Promise<NodeRecordFile | undefined> => {
    const path = join(ctx.paths.nodes, name);
    const read = await readRecord(ctx.fs, path, 'read node record');
    if (read.kind === 'refused') await quarantine(ctx, path, name, read.reason);
    if (read.kind !== 'text') return undefined;
    try {
      return Object.freeze({ name, record: JSON.parse(read.text) as unknown, mtimeMs: read.mtimeMs });
    } catch {
      return undefined; // a writer mid-replace on a filesystem without atomic rename
    }
  });
  return files.filter((file): file is NodeRecordFile => file !== undefined);
}

/**
 * Removes temps older than `maxAgeMs` from `building/`. A temp lives for milliseconds,
 * so an old one was left by a crash; the margin also absorbs clock offset between this
 * node and the store. Returns how many were removed.
 */
export async function sweepBuilding(ctx: StoreContext, maxAgeMs: number): Promise<number> {
  const names = await readdirStrict(ctx, ctx.paths.building, 'sweep building');
  const now = ctx.clock.now();
  const removed = await mapBounded(
    names.filter((name) => name.endsWith('.tmp')),
    ctx.concurrency,
    async (name) => {
      const path = join(ctx.paths.building, name);
      const stats = await lstatTolerant(ctx, path, 'sweep building');
      // A folder under a temp's name is none of refrelay's: left, as every foreign entry.
      if (stats === undefined || stats.isDirectory() || now - stats.mtimeMs <= maxAgeMs) return false;
      return unlinkTolerant(ctx, path, 'sweep building');
    },
  );
  return removed.filter(Boolean).length;
}

/**
 * `done/<lockName>.<leaseId>`, the lease id being `<nodeId>.<token>`: the only names a sweep of
 * done/ deletes. Anything else there (a `<40 hex>.json` someone made) is not ours to delete.
 */
const DONE_FOLDER_NAME = /^[0-9a-f]{40}\.[A-Za-z0-9_.-]+\.[A-Za-z0-9]+$/;

/**
 * Deletes retired claim folders in done/ — every task in them was pushed, whichever node retired
 * them, so any node may sweep. Returns how many folders it removed. A folder another node is
 * sweeping at the same time, or one that keeps a file (a network filesystem's `.nfs*` name for a
 * file still open somewhere), is left for a later sweep.
 */
export async function sweepDone(ctx: StoreContext, maxFolders = Number.POSITIVE_INFINITY): Promise<number> {
  const all = (await readdirStrict(ctx, ctx.paths.done, 'sweep done')).filter((name) => DONE_FOLDER_NAME.test(name));
  // A part of the folder, from a random place: nodes sweeping side by side, or a folder that
  // cannot go yet, do not make every sweep start with the same names.
  const start = all.length > maxFolders ? Math.floor(ctx.random.next() * all.length) : 0;
  const names = [...all.slice(start), ...all.slice(0, start)].slice(0, maxFolders);
  const folders = (
    await mapBounded(names, ctx.concurrency, async (name) => {
      const dir = join(ctx.paths.done, name);
      // One this node may not list (a stranger's mode 000) stays; the others are swept.
      const files = await readdirListed(ctx, dir, 'sweep done');
      return files === undefined ? undefined : { dir, files };
    })
  ).filter((folder) => folder !== undefined);
  // Gone: another node swept it first. EBUSY / ENOTEMPTY: a file still open somewhere; later.
  // EISDIR / EPERM / EACCES: a folder someone put in it (which a sweep does not walk), or a folder
  // this node may not change; the claim folder stays, the others are swept.
  const unlinks: FileOp[] = folders.flatMap(({ dir, files }) =>
    files.filter((file) => file !== OWNER_RECORD_NAME).map((file) => ({ op: 'unlink' as const, path: join(dir, file) })),
  );
  doneOrGone('sweep done', unlinks, await runFileOps(ctx, unlinks), ['EBUSY', 'EISDIR', 'EPERM', 'EACCES']);
  // The owner record goes last, and only from a folder nothing else is left in: while a client may
  // still see the folder under its waiting name, the record tells a writer that its task landed
  // among claimed ones (DESIGN.md "Waiting folders", Stale lookups). A folder that keeps anything
  // else keeps its record for a later sweep.
  const emptied = await mapBounded(folders, ctx.concurrency, async ({ dir }) =>
    (await readdirListed(ctx, dir, 'sweep done'))?.every((file) => file === OWNER_RECORD_NAME),
  );
  const last = folders.filter((_, i) => emptied[i] === true);
  const records: FileOp[] = last.map(({ dir }) => ({ op: 'unlink', path: join(dir, OWNER_RECORD_NAME) }));
  doneOrGone('sweep done', records, await runFileOps(ctx, records), ['EBUSY', 'EISDIR', 'EPERM', 'EACCES']);
  const rmdirs: FileOp[] = last.map(({ dir }) => ({ op: 'rmdir', path: dir }));
  return doneOrGone('sweep done', rmdirs, await runFileOps(ctx, rmdirs), ['ENOTEMPTY', 'EEXIST', 'EBUSY']).filter(Boolean).length;
}
