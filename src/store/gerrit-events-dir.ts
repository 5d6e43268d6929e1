import { join } from 'node:path';
import { StoreError } from '../errors.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { exists, type StoreFs } from './store-fs.js';
import { STORE_MARKER_NAME, type StorePaths } from './store-paths.js';
import { plural } from '../runtime/plural.js';

/**
 * Gerrit's replication plugin keeps its queue in `<eventsDirectory>/ref-updates/{building,
 * running,waiting}` (ReplicationTasksStorage): the same folder names as a refrelay store, and
 * `eventsDirectory` is an alias of `storePath`. A store path at the plugin's events directory
 * would be shared: refrelay never pushes the plugin's task files (named `<sha1>`, without `.json`,
 * so its listings ignore them: they would be lost), and the plugin moves files there and walks
 * refrelay's lock folders on every start. So such a path is refused, with what to run instead.
 */

/** A task file of the plugin: the sha1 of the task, nothing else (refrelay's are `<sha1>.json`). */
const GERRIT_TASK_NAME = /^[0-9a-f]{40}$/;

/** Entries per folder looked at: the counts in the message are of these. */
const ENTRIES_CHECKED = 1000;

/** What of the plugin's queue is at a store path. */
export interface GerritQueueFound {
  /** Task files the plugin wrote in `ref-updates/waiting/` (refrelay's live-lane folders there have the same names). */
  readonly waiting: number;
  /** Task files in `ref-updates/running/` (refrelay's entries there are folders). */
  readonly running: number;
}

/**
 * The plugin's queue at `paths.root`, or undefined. Evidence is its task files in waiting/ or
 * running/; without a marker, also its bare layout (waiting/ with running/ or building/, and none
 * of the folders every refrelay since the first has made), which the plugin makes before it
 * queues anything. A folder that cannot be read gives no evidence: this is a refusal with advice,
 * and the reads that follow report real errors.
 */
export async function findGerritQueue(fs: StoreFs, paths: StorePaths): Promise<GerritQueueFound | undefined> {
  const waiting = await pluginFilesIn(fs, paths.waiting);
  const running = await pluginFilesIn(fs, paths.running);
  if (waiting + running > 0) return { waiting, running };
  if (await exists(fs, join(paths.root, STORE_MARKER_NAME))) return undefined;
  const pluginLayout =
    (await isRealFolder(fs, paths.waiting)) &&
    ((await isRealFolder(fs, paths.running)) || (await isRealFolder(fs, paths.building))) &&
    !(await anyExists(fs, [paths.failed, paths.corrupt, paths.uriState, paths.nodes]));
  return pluginLayout ? { waiting: 0, running: 0 } : undefined;
}

/** Why `root` cannot be a refrelay store, and what to do: for a StoreError or a config problem. */
export function gerritEventsDirMessage(root: string, found: GerritQueueFound): string {
  const total = found.waiting + found.running;
  const evidence =
    total === 0
      ? "its ref-updates/ holds the plugin's building/, running/ and waiting/ and nothing of refrelay's"
      : `its ref-updates/ holds ${plural(total, 'task file')} of the plugin (${found.waiting} in waiting/, ${found.running} in running/)`;
  return (
    `${root} is the events directory of Gerrit's replication plugin, not a refrelay store: ${evidence}. ` +
    "refrelay never pushes the plugin's task files and the plugin moves files there, so they cannot share it. " +
    `Point replication.storePath at a folder of refrelay's own (refrelay init makes it), then take the plugin's tasks over with: refrelay import-gerrit-queue ${root}`
  );
}

/** Thrown when a store is opened or initialised at the plugin's events directory. */
export class GerritEventsDirError extends StoreError {
  constructor(
    root: string,
    readonly found: GerritQueueFound,
  ) {
    super(gerritEventsDirMessage(root, found));
  }
}

/**
 * Entries of `dir` named like the plugin's task files that are there and not folders: in waiting/
 * and running/ refrelay's own entries with those names (a URI's live-lane waiting folder, a lock
 * folder) are folders, and one removed while we look (claimed, retired) is no evidence either.
 */
async function pluginFilesIn(fs: StoreFs, dir: string): Promise<number> {
  // A sample is evidence enough: a store with 100,000 URIs waiting must not cost 100,000 lstats at every start.
  const names = (await namesIn(fs, dir)).filter((name) => GERRIT_TASK_NAME.test(name)).slice(0, ENTRIES_CHECKED);
  const files = await mapBounded(names, 16, async (name) => {
    try {
      return !(await fs.lstat(join(dir, name))).isDirectory();
    } catch {
      return false;
    }
  });
  return files.filter(Boolean).length;
}

async function namesIn(fs: StoreFs, dir: string): Promise<string[]> {
  try {
    // lstat first: readdir would follow a symlink out of the store.
    return (await fs.lstat(dir)).isDirectory() ? await fs.readdir(dir) : [];
  } catch {
    return [];
  }
}

async function isRealFolder(fs: StoreFs, path: string): Promise<boolean> {
  try {
    return (await fs.lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function anyExists(fs: StoreFs, paths: readonly string[]): Promise<boolean> {
  for (const path of paths) if (await exists(fs, path)) return true;
  return false;
}
