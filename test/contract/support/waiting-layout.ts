import type { StoreFs } from '../../../src/store/store-fs.js';
import { parseWaitingFolderName, waitingFolderName } from '../../../src/store/store-paths.js';
import type { TaskStore, WaitingTask } from '../../../src/store/task-store.js';
import { laneOfTask, taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { faultyFs } from './faulty-fs.js';
import type { StoreEnv } from './store-envs.js';

/** Layout 2 (DESIGN.md "Waiting folders (layout 2)"): `waiting/<uriKey>[.bulk]/<taskKey>.json`. */
export const WAITING = 'ref-updates/waiting';

export const fileOf = (task: Task): string => `${taskKey(task)}.json`;
export const folderOf = (task: Task): string => waitingFolderName(uriKey(task.uri), laneOfTask(task));
/** Where a task waits, relative to the store root. */
export const waitingRel = (task: Task): string => `${WAITING}/${folderOf(task)}/${fileOf(task)}`;

/**
 * What waits, as `<folder>/<name>` for each entry of each waiting folder and the bare name for
 * anything else at the top of waiting/; sorted. An empty folder shows as nothing.
 */
export function waitingFiles(env: StoreEnv): string[] {
  return env
    .list(WAITING)
    .flatMap((name) => {
      if (parseWaitingFolderName(name) === undefined) return [name];
      try {
        return env.list(`${WAITING}/${name}`).map((inner) => `${name}/${inner}`);
      } catch {
        return [name]; // a file or a special entry under a folder's name
      }
    })
    .sort();
}

/** The task file names a store's listing shows: each learned folder's sample (tests keep one task per folder where they use it). */
export async function listedSamples(store: TaskStore): Promise<string[]> {
  return (await store.listWaiting()).folders.map((folder) => folder.sample.name).sort();
}

/** A listing entry for a task that is not where the store would read it from (a late or mistaken reset). */
export function entryOf(task: Task, mtimeMs = 0): WaitingTask {
  return { name: fileOf(task), key: taskKey(task), task, mtimeMs };
}

/** Counts the calls made on paths under waiting/, per method. */
export interface CountingFs {
  readonly fs: StoreFs;
  readonly calls: Record<keyof StoreFs, number>;
  /** Every call counted since the last reset, by method. */
  total(): number;
  reset(): void;
}

export function countingFs(base: StoreFs): CountingFs {
  const calls = { open: 0, link: 0, unlink: 0, rename: 0, readdir: 0, readBounded: 0, lstat: 0, mkdir: 0, rmdir: 0 } satisfies Record<keyof StoreFs, number>;
  const count = (method: keyof StoreFs, ...paths: string[]): void => {
    if (paths.some((path) => path.includes('/ref-updates/waiting'))) calls[method]++;
  };
  const fs = faultyFs(base, {
    open: (path, flags) => {
      count('open', path);
      return base.open(path, flags);
    },
    link: (from, to) => {
      count('link', from, to);
      return base.link(from, to);
    },
    unlink: (path) => {
      count('unlink', path);
      return base.unlink(path);
    },
    rename: (from, to) => {
      count('rename', from, to);
      return base.rename(from, to);
    },
    readdir: (path) => {
      count('readdir', path);
      return base.readdir(path);
    },
    readBounded: (path, maxBytes) => {
      count('readBounded', path);
      return base.readBounded(path, maxBytes);
    },
    lstat: (path) => {
      count('lstat', path);
      return base.lstat(path);
    },
    mkdir: (path, options) => {
      count('mkdir', path);
      return base.mkdir(path, options);
    },
    rmdir: (path) => {
      count('rmdir', path);
      return base.rmdir(path);
    },
  });
  return {
    fs,
    calls,
    total: () => Object.values(calls).reduce((sum, n) => sum + n, 0),
    reset: () => {
      for (const key of Object.keys(calls) as Array<keyof StoreFs>) calls[key] = 0;
    },
  };
}
