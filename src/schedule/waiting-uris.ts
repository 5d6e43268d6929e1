import type { WaitingTask } from '../store/store-types.js';
import type { UntrustedTask, UriGroup } from './uri-groups.js';

/** The waiting tasks of one URI, as a listing or a node's last pass counted them. */
export interface WaitingUri {
  readonly remote: string;
  readonly uri: string;
  readonly waiting: number;
  /** The oldest task's mtime (store clock). */
  readonly oldestMtimeMs: number;
}

/** Counts a listing of waiting/ per URI (and remote, as each task names it). */
export function waitingByUri(tasks: readonly WaitingTask[]): WaitingUri[] {
  const byUri = new Map<string, { remote: string; uri: string; waiting: number; oldestMtimeMs: number }>();
  for (const { task, mtimeMs } of tasks) {
    const key = `${task.remote}\u0000${task.uri}`;
    const found = byUri.get(key);
    if (found === undefined) byUri.set(key, { remote: task.remote, uri: task.uri, waiting: 1, oldestMtimeMs: mtimeMs });
    else {
      found.waiting++;
      if (mtimeMs < found.oldestMtimeMs) found.oldestMtimeMs = mtimeMs;
    }
  }
  return [...byUri.values()];
}

/** A pass's groups and refused tasks, counted per URI. */
export function countListed(groups: ReadonlyMap<string, UriGroup>, untrusted: readonly UntrustedTask[]): WaitingUri[] {
  const waiting: WaitingUri[] = [];
  for (const group of groups.values()) {
    waiting.push({ remote: group.remote.name, uri: group.uri, waiting: group.tasks.length, oldestMtimeMs: group.oldestMtimeMs });
  }
  return untrusted.length === 0 ? waiting : [...waiting, ...waitingByUri(untrusted.map(({ item }) => item))];
}
