import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Names in a folder, sorted; [] when the folder does not exist (a running node may claim or remove it between a look and a read: one read, no look). */
export function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Task file names (`<sha1>.json`) in a store folder, sorted. */
export function taskFilesIn(dir: string): string[] {
  return namesIn(dir).filter((name) => /^[0-9a-f]{40}\.json$/.test(name));
}

/**
 * The task files a local spool holds, sorted by task file name: where `enqueue` put them and
 * those a forwarder claimed into `forwarding/` (`<taskKey>.json.<hex>`) and has not removed yet.
 */
export function spooledTaskFiles(spool: string): string[] {
  const claimed = namesIn(join(spool, 'forwarding')).filter((name) => /^[0-9a-f]{40}\.json\.[0-9a-f]{12}$/.test(name));
  return [...taskFilesIn(spool), ...claimed.map((name) => name.slice(0, -13))].sort();
}

/** `uri-state/<uriKey>.json` parsed, or undefined when absent (a node may delete it between a look and a read: one read, no look). */
export function readUriStateFile(store: string, uriKey: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(join(store, 'uri-state', `${uriKey}.json`), 'utf8')) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Resolves once `check` returns a value other than undefined/false, or rejects after timeoutMs. */
export async function waitUntil<T>(what: string, check: () => T | undefined | false, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A URI's waiting folder in layout 2: `<uriKey>` (live) or `<uriKey>.bulk` (full syncs). */
const WAITING_FOLDER = /^[0-9a-f]{40}(\.bulk)?$/;

/**
 * Every waiting task file of a store as `<folder>/<taskKey>.json` paths relative to waiting/,
 * sorted; the folder says the URI and lane. [] when waiting/ does not exist.
 */
export function waitingTaskEntries(store: string): string[] {
  const waiting = join(store, 'ref-updates', 'waiting');
  return (
    namesIn(waiting)
      // Only real folders: a test may plant a file or a symlink under a folder's name.
      .filter((folder) => WAITING_FOLDER.test(folder) && lstatSync(join(waiting, folder), { throwIfNoEntry: false })?.isDirectory() === true)
      .flatMap((folder) => taskFilesIn(join(waiting, folder)).map((name) => `${folder}/${name}`))
      .sort()
  );
}

/** Every waiting task file name (`<taskKey>.json`) of a store, whatever its folder, sorted. */
export function waitingTaskNames(store: string): string[] {
  return waitingTaskEntries(store)
    .map((entry) => entry.slice(entry.indexOf('/') + 1))
    .sort();
}

/** Full paths of every waiting task file of a store, sorted by name. */
export function waitingTaskPaths(store: string): string[] {
  const waiting = join(store, 'ref-updates', 'waiting');
  return waitingTaskEntries(store)
    .sort((a, b) => a.slice(a.indexOf('/')).localeCompare(b.slice(b.indexOf('/'))))
    .map((entry) => join(waiting, entry));
}

/** Parsed waiting tasks of a store (the JSON of each file), sorted by file name. */
export function readWaitingTasks(store: string): Array<Record<string, unknown>> {
  return waitingTaskPaths(store).map((path) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>);
}
