import { createHash, randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readdir, rename, rm, unlink, utimes, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { RefrelayError } from '../errors.js';
import { entryType, readBounded, STORE_RECORD_MAX_BYTES, type BoundedRead } from '../runtime/bounded-read.js';
import { errnoName } from '../runtime/errno.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { decodeTask, encodeTask, taskKey, type Task } from '../task/task.js';

/**
 * The local spool (DESIGN.md invariant 9): where `enqueue` leaves the tasks of an update the
 * store cannot take, until a daemon of that store on this machine forwards them. One folder per
 * store, named by the sha1 of the resolved store path, so the nodes of another store on the same
 * machine never forward it; `store.txt` in it names the store for a person looking. Task files
 * have the store's format and name (`<taskKey>.json`); their mtime is the enqueue time. A
 * forwarder claims each one into `forwarding/` before it publishes it (claimSpool).
 */

export const SPOOL_STORE_FILE = 'store.txt';
export const SPOOL_CORRUPT_DIR = 'corrupt';
/** Spool files a forwarder has claimed (moved out of `enqueue`'s way) and not yet seen durable in the store. */
export const SPOOL_FORWARDING_DIR = 'forwarding';
const TASK_NAME = /^[0-9a-f]{40}\.json$/;
/** `<taskKey>.json.<12 hex>`: one claim of a spool file; the suffix keeps two claims of one task apart. */
const CLAIMED_NAME = /^([0-9a-f]{40}\.json)\.[0-9a-f]{12}$/;
/** Files read or published side by side: a local disk, but the store behind may be NFS. */
const SPOOL_CONCURRENCY = 16;

export function spoolDirFor(spoolRoot: string, storePath: string): string {
  return join(spoolRoot, createHash('sha1').update(resolve(storePath)).digest('hex'));
}

/**
 * Writes each task as `<taskKey>.json` in `dir` (made with its parents): temp, fsync, then `link`
 * (an existing file is the same task, queued earlier: it and its older mtime stay), and the
 * folder fsynced last, so a task is on disk before `enqueue` says it is spooled.
 */
export async function spoolTasks(dir: string, storePath: string, tasks: readonly Task[], enqueuedAt: Date): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeNew(dir, SPOOL_STORE_FILE, `${resolve(storePath)}\n`, enqueuedAt);
  const seen = new Set<string>();
  for (const task of tasks) {
    const key = taskKey(task);
    if (seen.has(key)) continue;
    seen.add(key);
    await spoolOne(dir, `${key}.json`, encodeTask(task), enqueuedAt);
  }
  await fsyncDir(dir);
}

/**
 * Spools one task file; one already there is the same task, spooled earlier and not claimed by a
 * forwarder yet, so its claim and publication come after this update. It is touched all the same
 * (same mtime, new ctime) for a forwarder that may not claim it and reads it in place: that one
 * keeps a file touched since it read it for its next pass (daemon/spool-forwarder.ts). One that a
 * forwarder claimed between the `link` and the `lstat` is written again: this update must be on
 * disk when `enqueue` says it is spooled.
 */
async function spoolOne(dir: string, name: string, text: string, enqueuedAt: Date): Promise<void> {
  const path = join(dir, name);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await writeNew(dir, name, text, enqueuedAt)) return;
    const existing = await lstat(path).catch((error: unknown) => {
      if (errnoName(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (existing === undefined) continue;
    // Not a task file spooled earlier: saying "spooled" would lose this update (the forwarder quarantines it).
    if (!existing.isFile()) throw new RefrelayError('SPOOL', `could not spool ${path}: ${entryType(existing)} stands there`);
    // Gone meanwhile (a forwarder that may not claim removed it): written again. Refused (a
    // file of another hook user): left as it is, the limit DESIGN.md "The local spool" names.
    const touched = await utimes(path, existing.atime, existing.mtime).then(
      () => true,
      (error: unknown) => errnoName(error) !== 'ENOENT',
    );
    if (touched) return;
  }
  throw new RefrelayError('SPOOL', `could not spool ${path}: it kept being removed while it was written`);
}

/** False when `name` existed already (and was kept). */
async function writeNew(dir: string, name: string, text: string, mtime: Date): Promise<boolean> {
  const temp = join(dir, `.${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx');
    await handle.writeFile(text);
    await handle.utimes(mtime, mtime);
    await handle.sync();
    const opened = handle;
    handle = undefined;
    await opened.close();
    return await link(temp, join(dir, name)).then(
      () => true,
      (error: unknown) => {
        if (errnoName(error) !== 'EEXIST') throw error;
        return false;
      },
    );
  } finally {
    await handle?.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface SpooledTask {
  /** Where it is read and removed: its claim in `forwarding/`, or its own place when the claim was refused. */
  readonly path: string;
  readonly task: Task;
  /** When `enqueue` spooled it, on this machine's clock. */
  readonly enqueuedAtMs: number;
  /** With the mtime and ctime, what tells the same spool file from a rewritten one. */
  readonly sizeBytes: number;
  /** Changes when `enqueue` spools the same task again on a file left in place (spoolTasks touches it). */
  readonly ctimeMs: number;
}

export interface SpoolReading {
  readonly tasks: SpooledTask[];
  /** Files moved to `corrupt/`: names and why (type, size, format or errno; never content). */
  readonly quarantined: Array<{ readonly name: string; readonly reason: string }>;
  /** Files neither read nor moved this pass (left where they are): names and why. */
  readonly skipped: Array<{ readonly name: string; readonly reason: string }>;
  /** Whether there were files to claim this pass, and if some were read in place instead, why. */
  readonly claims: 'none-to-make' | 'made' | { readonly refused: string };
}

/** The file operations of a spool pass: the real ones, or faults in tests (a root test user gets no EACCES). */
export interface SpoolFiles {
  readonly read: (path: string) => Promise<BoundedRead>;
  /** Claims a file into `forwarding/`, or moves one to `corrupt/`. */
  readonly rename: (from: string, to: string) => Promise<void>;
  readonly unlink: (path: string) => Promise<void>;
}

export const realSpoolFiles: SpoolFiles = { read: (path) => readBounded(path, STORE_RECORD_MAX_BYTES), rename, unlink };

/** Errors of one entry itself: it stays unreadable however often it is read, so it is quarantined. */
const ENTRY_ERRORS = new Set(['EACCES', 'EPERM', 'EISDIR', 'ELOOP', 'ENAMETOOLONG', 'ENXIO']);

/**
 * Claims and reads the spooled tasks in `dir` (none when it does not exist). Each
 * `<taskKey>.json` is first renamed into `forwarding/` under a name of its own: from then on an
 * `enqueue` of the same task finds the name free and writes a new file, which the next pass
 * forwards, so no update lands on a file this pass will remove. Claims already in `forwarding/`
 * (a forwarder that died, or another node of this store on this machine) are read too:
 * forwarding a task twice is a no-op of the store's no-clobber create. A claim refused with an
 * error other than ENOENT (another node claimed it) leaves the file to be read in place.
 *
 * A spool file is as untrusted as a store file: read bounded and `lstat`-checked, and one that
 * is refused, unreadable for reasons of its own (EACCES, EPERM, EISDIR, ELOOP) or does not decode
 * is moved to `corrupt/` with a `.reason` beside it, never deleted. One that cannot be moved, or
 * fails with another error (EIO), is skipped and reported, so one bad file never holds back the
 * others; only a failing `readdir` of the folder fails the pass.
 */
export async function claimSpool(dir: string, files: SpoolFiles = realSpoolFiles): Promise<SpoolReading> {
  const { inPlace, claims } = await claimAll(dir, await spooledNames(dir), files);
  const claimed = (await claimedNames(dir)).map((name) => join(dir, SPOOL_FORWARDING_DIR, name));
  const tasks: SpooledTask[] = [];
  const quarantined: Array<{ name: string; reason: string }> = [];
  const skipped: Array<{ name: string; reason: string }> = [];
  await mapBounded([...claimed, ...inPlace], SPOOL_CONCURRENCY, async (path) => {
    const name = spooledNameOf(path);
    let read: BoundedRead;
    try {
      read = await files.read(path);
    } catch (error) {
      const code = errnoName(error) ?? 'an unknown error';
      if (code === 'ENOENT') return;
      if (!ENTRY_ERRORS.has(code)) {
        skipped.push({ name, reason: `could not be read: ${code}` });
        return;
      }
      read = { kind: 'refused', reason: `could not be read: ${code}` };
    }
    let reason: string;
    if (read.kind === 'text') {
      try {
        tasks.push({ path, task: decodeTask(read.text), enqueuedAtMs: read.mtimeMs, sizeBytes: read.sizeBytes, ctimeMs: read.ctimeMs });
        return;
      } catch (error) {
        // decodeTask's messages never quote the content.
        reason = error instanceof Error ? error.message : String(error);
      }
    } else {
      reason = read.reason;
    }
    const moved = await quarantineSpooled(dir, path, reason, files);
    if (moved === true) quarantined.push({ name, reason });
    else if (moved !== false) skipped.push({ name, reason: `${reason}; could not be moved to ${SPOOL_CORRUPT_DIR}/: ${moved}` });
  });
  return { tasks, quarantined, skipped, claims };
}

/** Renames each of `names` into `forwarding/`; returns the paths of those whose claim was refused, to be read in place, and why. */
async function claimAll(dir: string, names: readonly string[], files: SpoolFiles): Promise<{ inPlace: string[]; claims: SpoolReading['claims'] }> {
  if (names.length === 0) return { inPlace: [], claims: 'none-to-make' };
  const forwarding = await spoolFolder(dir, SPOOL_FORWARDING_DIR, { make: true });
  if (typeof forwarding !== 'string') return { inPlace: names.map((name) => join(dir, name)), claims: forwarding };
  const inPlace: string[] = [];
  let claims: SpoolReading['claims'] = 'made';
  await mapBounded(names, SPOOL_CONCURRENCY, async (name) => {
    const path = join(dir, name);
    await files.rename(path, join(forwarding, `${name}.${randomBytes(6).toString('hex')}`)).catch((error: unknown) => {
      const code = errnoName(error) ?? 'an unknown error';
      if (code === 'ENOENT') return;
      inPlace.push(path);
      claims = { refused: `a move into ${SPOOL_FORWARDING_DIR}/ failed with ${code}` };
    });
  });
  return { inPlace, claims };
}

/**
 * `<dir>/<name>` (`forwarding/`, `corrupt/`) when it is a folder of its own (made when `make`),
 * else why not: a link there is never followed, so nothing is moved into it (claims are refused
 * and files read in place; refused files stay where they are).
 */
async function spoolFolder(dir: string, name: string, { make }: { make: boolean }): Promise<string | { refused: string }> {
  const folder = join(dir, name);
  const made = make
    ? await mkdir(folder).then(
        () => undefined,
        (error: unknown) => errnoName(error),
      )
    : undefined;
  const stats = await lstat(folder).catch(() => undefined);
  if (stats?.isDirectory() === true) return folder;
  if (stats !== undefined) return { refused: `${name}/ is ${entryType(stats)}, not a folder` };
  return { refused: `${name}/ could not be made: ${made ?? 'it vanished'}` };
}

/** `<taskKey>.json` of a spool file, from its own name or its claim's. */
const spooledNameOf = (path: string): string => {
  const name = basename(path);
  return CLAIMED_NAME.exec(name)?.[1] ?? name;
};

/** Task file names in `dir`, one `readdir`; 0 entries when it does not exist. */
export async function spooledNames(dir: string): Promise<string[]> {
  return (await listOrEmpty(dir)).filter((name) => TASK_NAME.test(name)).sort();
}

/** Claims in `forwarding/` not yet removed: forwarded again by the next pass, whoever made them. */
export async function claimedNames(dir: string): Promise<string[]> {
  const forwarding = await spoolFolder(dir, SPOOL_FORWARDING_DIR, { make: false });
  return typeof forwarding !== 'string' ? [] : (await listOrEmpty(forwarding)).filter((name) => CLAIMED_NAME.test(name)).sort();
}

async function listOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (errnoName(error) === 'ENOENT') return [];
    throw error;
  }
}

/**
 * After its task is durable in the store: 'removed', 'gone' (another node removed it first), or
 * 'spooled-again' when `enqueue` spooled the same task since it was read (its ctime moved), which
 * only a file read in place can see (`enqueue` never touches a claim): that update may have come
 * after the store's copy was pushed, so the file stays for the next pass.
 */
export async function removeSpooled(spooled: SpooledTask, files: SpoolFiles = realSpoolFiles): Promise<'removed' | 'gone' | 'spooled-again'> {
  try {
    if ((await lstat(spooled.path)).ctimeMs !== spooled.ctimeMs) return 'spooled-again';
    await files.unlink(spooled.path);
    return 'removed';
  } catch (error) {
    if (errnoName(error) === 'ENOENT') return 'gone';
    throw error;
  }
}

/**
 * True when moved, false when gone meanwhile, else what kept it in place (an errno, or a
 * `corrupt/` that is not a folder of its own: a link there is never followed, as the store's own
 * quarantine leaves an entry in place when it cannot be moved). The reason is written first (a
 * new file, never through a link) and the file moves only once it is there, so a full disk
 * leaves the file in place rather than in corrupt/ without an explanation.
 */
async function quarantineSpooled(dir: string, path: string, reason: string, files: SpoolFiles): Promise<boolean | string> {
  const corrupt = await spoolFolder(dir, SPOOL_CORRUPT_DIR, { make: true });
  if (typeof corrupt !== 'string') return corrupt.refused;
  const target = join(corrupt, `${basename(path)}.${randomBytes(6).toString('hex')}`);
  const record = `${JSON.stringify({ reason, quarantinedAt: Date.now(), originalPath: join(dir, spooledNameOf(path)) })}\n`;
  try {
    await writeFile(`${target}.reason`, record, { flag: 'wx' });
  } catch (error) {
    return errnoName(error) ?? 'an unknown error';
  }
  try {
    await files.rename(path, target);
  } catch (error) {
    await rm(`${target}.reason`, { force: true }).catch(() => undefined);
    const code = errnoName(error) ?? 'an unknown error';
    return code === 'ENOENT' ? false : code;
  }
  return true;
}
