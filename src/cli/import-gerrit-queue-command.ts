import { readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { ReplicationConfig } from '../config/types.js';
import { UsageError } from '../errors.js';
import { errnoName } from '../runtime/errno.js';
import { untrustedReason } from '../schedule/uri-groups.js';
import { mapBounded } from '../store/bounded.js';
import { isGone, nodeStoreFs } from '../store/store-fs.js';
import { StorePaths } from '../store/store-paths.js';
import { readTaskFile, type ReadOutcome } from '../store/task-reader.js';
import { TaskStore } from '../store/task-store.js';
import { taskKey, type Task } from '../task/task.js';
import { EXIT_FAILED, EXIT_OK } from './exit-codes.js';
import { loadCliConfig } from './load-cli-config.js';

export interface ImportGerritQueueArgs {
  config?: string | undefined;
  /** Gerrit's `ref-updates` folder (holding `waiting/`) or its `waiting/` folder. */
  dir: string;
  dryRun: boolean;
  remove: boolean;
}

/** One Gerrit task file that decoded and may be pushed by this config. */
interface Importable {
  readonly path: string;
  readonly task: Task;
  readonly key: string;
  readonly mtime: Date;
}

interface Skipped {
  readonly path: string;
  readonly reason: string;
}

/** Files read at once: a network filesystem serves a handful of parallel reads well. */
const READ_CONCURRENCY = 16;

/**
 * `refrelay import-gerrit-queue DIR`: takes over the tasks Gerrit's replication plugin persisted
 * in `waiting/`. Each importable file becomes one of our tasks with the Gerrit file's mtime as its
 * first-enqueue time, so it is due as soon as Gerrit would have pushed it. Files this config could
 * never push are reported and left alone. Exit 1 when any file was skipped, so cron notices.
 */
export async function runImportGerritQueue(args: ImportGerritQueueArgs): Promise<number> {
  const waitingDir = gerritWaitingDir(args.dir);
  const config = loadCliConfig({ config: args.config });
  const paths = new StorePaths(config.storePath);
  if (sameFolder(waitingDir, paths.waiting)) {
    throw new UsageError(`import-gerrit-queue: ${waitingDir} is this store's own waiting/ folder, not Gerrit's`);
  }

  const entries = await readdir(waitingDir, { withFileTypes: true }).catch((error: unknown) => {
    throw new UsageError(`import-gerrit-queue: cannot list ${waitingDir}: ${errnoName(error) ?? String(error)}`, { cause: error });
  });
  const names = entries
    // Gerrit names its files after a sha1; dot files (`.nfs*`, editor droppings) are not tasks.
    .filter((entry) => entry.isFile() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort();
  const read = await mapBounded(names, READ_CONCURRENCY, (name) => readGerritTask(config, join(waitingDir, name)));
  const importable = read.filter((item): item is Importable => 'task' in item);
  const skipped = read.filter((item): item is Skipped => 'reason' in item);
  for (const item of skipped) process.stderr.write(`skipped ${item.path}: ${item.reason}\n`);
  warnAboutRunning(waitingDir);

  // Gerrit's legacy `ref` form and its `refs` form of the same update are one task here; it keeps
  // the oldest of their mtimes, as a second enqueue of a queued task keeps the first.
  const oldest = new Map<string, Importable>();
  for (const item of importable) {
    const seen = oldest.get(item.key);
    if (seen === undefined || item.mtime.getTime() < seen.mtime.getTime()) oldest.set(item.key, item);
  }

  const noun = (count: number): string => `${count} task${count === 1 ? '' : 's'}`;
  if (args.dryRun) {
    const wouldCreate = [...oldest.keys()].filter((key) => !isFile(paths.waitingFile(`${key}.json`))).length;
    process.stdout.write(`dry run: would import ${noun(importable.length)} (${importable.length - wouldCreate} already queued), skip ${skipped.length}; nothing written\n`);
    return skipped.length > 0 ? EXIT_FAILED : EXIT_OK;
  }

  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  const unique = [...oldest.values()];
  const results = await store.createMany(unique.map((item) => item.task), { mtimeOf: (task) => oldest.get(taskKey(task))?.mtime });
  const created = results.filter((result) => result.created).length;
  // "Already queued": the task was in our waiting/ before, or another Gerrit file carried it too.
  let summary = `imported ${noun(importable.length)} (${importable.length - created} already queued), skipped ${skipped.length}`;
  let removeFailed = false;
  if (args.remove) {
    // createMany resolved: every task is durable in our store, so Gerrit's copies may go.
    let removed = 0;
    for (const item of importable) {
      if (await removeGerritFile(item.path)) removed++;
      else removeFailed = true;
    }
    summary += `, removed ${removed} Gerrit file${removed === 1 ? '' : 's'}`;
  }
  process.stdout.write(`${summary}\n`);
  return skipped.length > 0 || removeFailed ? EXIT_FAILED : EXIT_OK;
}

/** DIR is Gerrit's `ref-updates` folder (with `waiting/`) or that `waiting/` folder itself. */
function gerritWaitingDir(dir: string): string {
  const absolute = resolve(dir);
  let stats: Stats;
  try {
    stats = statSync(absolute);
  } catch {
    throw new UsageError(`import-gerrit-queue: ${dir} does not exist`);
  }
  if (!stats.isDirectory()) throw new UsageError(`import-gerrit-queue: ${dir} is not a folder`);
  const waiting = join(absolute, 'waiting');
  if (isFolder(waiting)) return waiting;
  if (basename(absolute) === 'waiting') return absolute;
  throw new UsageError(`import-gerrit-queue: ${dir} has no waiting/ folder; give Gerrit's ref-updates folder or its waiting/ folder`);
}

/** Reads and checks one Gerrit task file; every refusal says why. */
async function readGerritTask(config: ReplicationConfig, path: string): Promise<Importable | Skipped> {
  let read: ReadOutcome;
  try {
    // The reader the daemon uses for its own task files: same formats, same refusals.
    read = await readTaskFile(nodeStoreFs, path);
  } catch (error) {
    return { path, reason: `cannot read: ${errnoName(error) ?? String(error)}` };
  }
  if (read.kind === 'gone') return { path, reason: 'vanished while reading (is Gerrit still running?)' };
  if (read.kind === 'corrupt') return { path, reason: read.reason };
  // The same rules the daemon applies to every task file it finds (see untrustedReason).
  const reason = untrustedReason(config, read.task);
  return reason === undefined ? { path, task: read.task, key: taskKey(read.task), mtime: new Date(read.mtimeMs) } : { path, reason };
}

/** Tasks Gerrit was pushing when it stopped stay in running/; they are not taken silently. */
function warnAboutRunning(waitingDir: string): void {
  const running = join(waitingDir, '..', 'running');
  let names: string[];
  try {
    names = readdirSync(running);
  } catch {
    return;
  }
  const count = names.filter((name) => !name.startsWith('.') && isFile(join(running, name))).length;
  if (count === 0) return;
  const [files, them] = count === 1 ? ['1 task file', 'it'] : [`${count} task files`, 'them'];
  process.stderr.write(`note: ${files} in ${running} not imported: Gerrit was pushing ${them} when it stopped; move ${them} into waiting/ and run this again\n`);
}

/** True once the file is gone; a file that cannot be removed is reported and counts as a problem. */
async function removeGerritFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (isGone(error)) return true;
    process.stderr.write(`could not remove ${path}: ${errnoName(error) ?? String(error)} (its task is imported)\n`);
    return false;
  }
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
