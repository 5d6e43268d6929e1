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
    const { remote, uri } = sample.task;
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

/** A pass's groups and refused folders, counted per URI. */
export function countListed(groups: ReadonlyMap<string, UriGroup>, untrusted: readonly UntrustedFolder[]): WaitingUri[] {
  const waiting: WaitingUri[] = [];
  for (const group of groups.values()) {
    waiting.push({ remote: group.remote.name, uri: group.uri, uriKey: group.uriKey, waiting: group.taskCount, oldestMtimeMs: group.oldestMtimeMs });
  }
  return untrusted.length === 0 ? waiting : [...waiting, ...waitingByUri(untrusted.map(({ folder }) => folder))];
}
