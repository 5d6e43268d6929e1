import { lstatSync, realpathSync, statSync, type Dirent, type Stats } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { errnoName } from '../runtime/errno.js';
import { nodeStoreFs } from '../store/store-fs.js';
import { readTaskFile } from '../store/task-reader.js';
import type { Task } from '../task/task.js';

/** The folders of Gerrit's replication plugin queue (`<eventsDirectory>/ref-updates/…`). */
export interface GerritQueueDirs {
  readonly waiting: string;
  /** Tasks the plugin was pushing when it stopped; it moves them back to waiting/ on start. */
  readonly running: string;
}

/** One Gerrit task file, read; or why it cannot be taken. */
export type GerritFileRead = { readonly path: string; readonly task: Task; readonly mtime: Date } | { readonly path: string; readonly reason: string };

/**
 * The plugin walks its folders recursively (ReplicationTasksStorage.walkNonDirs), so files in
 * subfolders left by earlier plugin versions (a sharded waiting/, per-URI running/ folders) are
 * tasks too. Deeper than this is nothing the plugin ever wrote.
 */
const MAX_DEPTH = 3;

/**
 * DIR is the plugin's events directory (holding `ref-updates/`), its `ref-updates` folder
 * (holding `waiting/`) or that `waiting/` folder itself; `running/` is waiting/'s sibling.
 */
export function gerritQueueDirs(dir: string): GerritQueueDirs {
  const absolute = resolve(dir);
  let stats: Stats;
  try {
    stats = statSync(absolute);
  } catch {
    throw new UsageError(`import-gerrit-queue: ${dir} does not exist`);
  }
  if (!stats.isDirectory()) throw new UsageError(`import-gerrit-queue: ${dir} is not a folder`);
  // DIR is the operator's path (a symlinked site folder is common); what is inside it is the
  // plugin's, and only real folders are taken there.
  const waiting =
    [join(absolute, 'waiting'), join(absolute, 'ref-updates', 'waiting')].find(isRealFolderSync) ??
    (basename(absolute) === 'waiting' ? realpathSync(absolute) : undefined);
  if (waiting === undefined) {
    throw new UsageError(
      `import-gerrit-queue: ${dir} has no waiting/ folder; give the plugin's events directory, its ref-updates folder or its waiting/ folder`,
    );
  }
  return { waiting, running: join(waiting, '..', 'running') };
}

/**
 * The task files under `folder` (dot names — `.nfs*`, editor droppings — are not tasks), oldest
 * layouts included; an entry is never followed through a symlink: the reader refuses it.
 * A missing folder has none.
 */
export async function listGerritTaskFiles(folder: string, depth = 0): Promise<string[]> {
  let entries: Dirent[];
  try {
    if (depth === 0 && !(await lstat(folder)).isDirectory()) {
      throw new UsageError(`import-gerrit-queue: ${folder} is not a folder (a symbolic link is not followed)`);
    }
    entries = await readdir(folder, { withFileTypes: true });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if (errnoName(error) === 'ENOENT') return [];
    throw new UsageError(`import-gerrit-queue: cannot list ${folder}: ${errnoName(error) ?? String(error)}`, { cause: error });
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (entry.name.startsWith('.')) continue;
    const path = join(folder, entry.name);
    if (depth < MAX_DEPTH && (await isRealFolder(entry, path))) files.push(...(await listGerritTaskFiles(path, depth + 1)));
    else files.push(path);
  }
  return files;
}

/** Reads one Gerrit task file with the reader the daemon uses for its own: same formats, same refusals. */
export async function readGerritFile(path: string): Promise<GerritFileRead> {
  try {
    const read = await readTaskFile(nodeStoreFs, path);
    if (read.kind === 'gone') return { path, reason: 'vanished while reading (is Gerrit still running?)' };
    if (read.kind === 'corrupt') return { path, reason: read.reason };
    return { path, task: read.task, mtime: new Date(read.mtimeMs) };
  } catch (error) {
    return { path, reason: `cannot read: ${errnoName(error) ?? String(error)}` };
  }
}

/** A folder itself, never one reached through a symlink; `lstat` where the listing gives no type (some NFS). */
async function isRealFolder(entry: Dirent, path: string): Promise<boolean> {
  if (entry.isDirectory()) return true;
  if (entry.isFile() || entry.isSymbolicLink() || entry.isFIFO() || entry.isSocket() || entry.isBlockDevice() || entry.isCharacterDevice()) return false;
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

function isRealFolderSync(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}
