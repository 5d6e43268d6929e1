import { shownRemote } from '../task/names.js';
import type { WaitingFolder } from '../store/task-store.js';
import type { UntrustedFolder, UriGroup } from './uri-groups.js';

/** The waiting tasks of one URI, as a listing or a node's last pass counted them. */
export interface WaitingUri {
  readonly remote: string;
  readonly uri: string;
  /** Known from the folder (a summary's `uri` is redacted, and counting need not hash every URI again). */
  readonly uriKey?: string;
  readonly waiting: number;
  /** The oldest task's mtime (store clock). */
  readonly oldestMtimeMs: number;
}

/** Counts learned waiting folders per URI (and remote, as each folder's task names it). */
export function waitingByUri(folders: readonly WaitingFolder[]): WaitingUri[] {
  const byUri = new Map<string, { remote: string; uri: string; waiting: number; oldestMtimeMs: number }>();
  for (const { sample, taskCount, oldestMtimeMs } of folders) {
    // Refused folders are counted too: their task says anything.
    const { uri } = sample.task;
    const remote = shownRemote(sample.task.remote);
    const key = `${remote}\u0000${uri}`;
    const found = byUri.get(key);
    if (found === undefined) byUri.set(key, { remote, uri, waiting: taskCount, oldestMtimeMs });
    else {
      found.waiting += taskCount;
      if (oldestMtimeMs < found.oldestMtimeMs) found.oldestMtimeMs = oldestMtimeMs;
    }
  }
  return [...byUri.values()];
}

/**
 * A pass's groups and refused folders, counted per URI, one at a time: a reader that keeps
 * totals (queue-summary.ts) never holds a record per waiting URI at once.
 */
export function* listedUris(groups: ReadonlyMap<string, UriGroup>, untrusted: readonly UntrustedFolder[]): Generator<WaitingUri> {
  for (const group of groups.values()) {
    yield { remote: group.remote.name, uri: group.uri, uriKey: group.uriKey, waiting: group.taskCount, oldestMtimeMs: group.oldestMtimeMs };
  }
  if (untrusted.length > 0) yield* waitingByUri(untrusted.map(({ folder }) => folder));
}

/**
 * The oldest waiting task's age per remote that has any, from a pass's groups (and refused
 * folders) directly: what /readyz asks on every probe, with no record per URI made for it.
 */
export function oldestByRemote(groups: ReadonlyMap<string, UriGroup>, untrusted: readonly UntrustedFolder[], now: number): Map<string, number> {
  const oldest = new Map<string, number>();
  const see = (remote: string, mtimeMs: number): void => {
    const age = Math.max(0, now - mtimeMs);
    if (age > (oldest.get(remote) ?? -1)) oldest.set(remote, age);
  };
  for (const group of groups.values()) see(group.remote.name, group.oldestMtimeMs);
  for (const { folder } of untrusted) see(shownRemote(folder.sample.task.remote), folder.oldestMtimeMs);
  return oldest;
}
