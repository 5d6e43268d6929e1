import { realpathSync, statSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import type { ReplicationConfig } from '../config/types.js';
import { UsageError } from '../errors.js';
import { placeGerritTask } from '../intake/gerrit-task-owner.js';
import { errnoName, isGone } from '../runtime/errno.js';
import { taskNameProblem } from '../schedule/uri-groups.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { StorePaths } from '../store/store-paths.js';
import { TaskStore } from '../store/task-store.js';
import { taskKey, type Task } from '../task/task.js';
import { EXIT_FAILED, EXIT_OK } from './exit-codes.js';
import { gerritQueueDirs, listGerritTaskFiles, readGerritFile, type GerritFileRead } from './gerrit-queue-files.js';
import { waitingFolderOf } from '../store/waiting-folder.js';
import { loadCliConfig } from './load-cli-config.js';
import { plural } from '../runtime/plural.js';

export interface ImportGerritQueueArgs {
  config?: string | undefined;
  /** Gerrit's events directory, its `ref-updates` folder (holding `waiting/`) or its `waiting/` folder. */
  dir: string;
  dryRun: boolean;
  remove: boolean;
  /** Take running/ too: only once the plugin is stopped on every primary. */
  includeRunning: boolean;
}

/** One Gerrit task file that this config pushes, as it will be queued. */
interface Importable {
  readonly path: string;
  readonly task: Task;
  readonly key: string;
  readonly mtime: Date;
  readonly running: boolean;
  readonly remoteRenamed: boolean;
}

interface Skipped {
  readonly path: string;
  readonly reason: string;
}

/** Files read at once: a network filesystem serves a handful of parallel reads well. */
const READ_CONCURRENCY = 16;

/**
 * `refrelay import-gerrit-queue DIR`: takes over the tasks Gerrit's replication plugin persisted
 * in `waiting/` (and `running/` with --include-running). Each file is matched to the remote that
 * owns its URI, as the plugin matches it (intake/gerrit-task-owner.ts), and becomes one of our
 * tasks with the Gerrit file's mtime as its first-enqueue time, so it is due as soon as Gerrit
 * would have pushed it. Files this config could never push are reported and left alone. Exit 1
 * when any file was skipped, so cron notices.
 */
export async function runImportGerritQueue(args: ImportGerritQueueArgs): Promise<number> {
  const dirs = gerritQueueDirs(args.dir);
  const config = loadCliConfig({ config: args.config });
  const paths = new StorePaths(config.storePath);
  if (sameFolder(dirs.waiting, paths.waiting)) {
    throw new UsageError(
      `import-gerrit-queue: ${dirs.waiting} is the waiting/ folder of replication.storePath, not a queue to import; ` +
        "point storePath at a folder of refrelay's own first",
    );
  }

  const waiting = await listGerritTaskFiles(dirs.waiting);
  const running = await listGerritTaskFiles(dirs.running);
  const toRead = args.includeRunning ? [...waiting, ...running] : waiting;
  const fromRunning = new Set(args.includeRunning ? running : []);
  const read = await mapBounded(toRead, READ_CONCURRENCY, readGerritFile);
  const checked = read.map((item) => checkGerritTask(config, item, fromRunning.has(item.path)));
  const importable = checked.filter((item): item is Importable => 'task' in item);
  const skipped = checked.filter((item): item is Skipped => 'reason' in item);
  for (const item of skipped) process.stderr.write(`skipped ${item.path}: ${item.reason}\n`);
  const left = args.includeRunning ? 0 : running.length;
  if (left > 0) {
    const [files, them] = left === 1 ? ['1 task file', 'it'] : [`${left} task files`, 'them'];
    process.stderr.write(
      `note: ${files} in ${dirs.running} not imported: Gerrit was pushing ${them} when it stopped and puts ${them} back in waiting/ when it starts; ` +
        'once the plugin is stopped on every primary, run this again with --include-running\n',
    );
  }

  // One update in several files (Gerrit's legacy `ref` and its `refs` form, waiting/ and
  // running/) is one task here; it keeps the oldest of their mtimes, as a second enqueue of a
  // queued task keeps the first.
  const oldest = new Map<string, Importable>();
  for (const item of importable) {
    const seen = oldest.get(item.key);
    if (seen === undefined || item.mtime.getTime() < seen.mtime.getTime()) oldest.set(item.key, item);
  }

  if (args.dryRun) {
    const wouldCreate = [...oldest].filter(([key, item]) => !isFile(paths.waitingFile(waitingFolderOf(item.task), `${key}.json`))).length;
    process.stdout.write(`dry run: would import ${counts(importable, wouldCreate)}, skip ${skipped.length}${leftText(left, 'leave')}; nothing written\n`);
    return skipped.length > 0 ? EXIT_FAILED : EXIT_OK;
  }

  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  const results = await store.createMany(
    [...oldest.values()].map((item) => item.task),
    { mtimeOf: (task) => oldest.get(taskKey(task))?.mtime },
  );
  const created = results.filter((result) => result.created).length;
  // "Already queued": the task was in our waiting/ before, or another Gerrit file carried it too.
  let summary = `imported ${counts(importable, created)}, skipped ${skipped.length}${leftText(left, 'left')}`;
  let removeFailed = false;
  if (args.remove) {
    // createMany resolved: every task is durable in our store, so Gerrit's copies may go.
    let removed = 0;
    for (const item of importable) {
      if (await removeGerritFile(item.path)) removed++;
      else removeFailed = true;
    }
    summary += `, removed ${plural(removed, 'Gerrit file')}`;
  }
  process.stdout.write(`${summary}\n`);
  return skipped.length > 0 || removeFailed ? EXIT_FAILED : EXIT_OK;
}

/**
 * A file read becomes a task to queue, or a reason: names first (they become paths and git
 * arguments), then the remote that owns its URI.
 */
function checkGerritTask(config: ReplicationConfig, read: GerritFileRead, running: boolean): Importable | Skipped {
  if ('reason' in read) return read;
  const names = taskNameProblem(config, read.task);
  if (names !== undefined) return { path: read.path, reason: names };
  const placed = placeGerritTask(config, read.task);
  if ('problem' in placed) return { path: read.path, reason: placed.problem };
  return { path: read.path, task: placed.task, key: taskKey(placed.task), mtime: read.mtime, running, remoteRenamed: placed.remoteRenamed };
}

/** `3 tasks (1 already queued, 1 from running/, 1 under a renamed remote)`: extras only when there are any. */
function counts(importable: readonly Importable[], created: number): string {
  const extras = [`${importable.length - created} already queued`];
  const running = importable.filter((item) => item.running).length;
  if (running > 0) extras.push(`${running} from running/`);
  const renamed = importable.filter((item) => item.remoteRenamed).length;
  if (renamed > 0) extras.push(`${renamed} under a renamed remote`);
  return `${plural(importable.length, 'task')} (${extras.join(', ')})`;
}

function leftText(left: number, verb: 'left' | 'leave'): string {
  return left === 0 ? '' : `, ${verb} ${left} in running/`;
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
