import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { expandUrl } from '../config/remote-url.js';
import type { WaitingTask } from '../store/store-types.js';
import { FULL_SYNC_REF, uriKey as computeUriKey } from '../task/task.js';
import type { Lane } from './fair-share.js';

/** Every waiting task of one destination URI. */
export interface UriGroup {
  readonly uriKey: string;
  readonly uri: string;
  /** The remote whose settings pace this URI (the first remote seen; URIs rarely span remotes). */
  readonly remote: RemoteConfig;
  readonly tasks: WaitingTask[];
  oldestMtimeMs: number;
  /** Live when any of its tasks is (the push carries every claimed ref anyway). */
  lane: Lane;
}

/** Full syncs (replicate, replicate on startup) are bulk work; single ref updates are live. */
export function laneOfTask(task: WaitingTask['task']): Lane {
  return task.refs.length === 1 && task.refs[0] === FULL_SYNC_REF ? 'bulk' : 'live';
}

/**
 * Only tasks this node may take: the remote is configured here and the URI is one of that
 * remote's URLs for the task's project. A task naming any other URL is never pushed by us.
 */
export function remoteForTask(config: ReplicationConfig, task: WaitingTask['task']): RemoteConfig | undefined {
  const remote = config.remotes.find((candidate) => candidate.name === task.remote);
  if (remote === undefined) return undefined;
  const matches = remote.urls.some((template) => expandUrl(template, task.project, remote.remoteNameStyle) === task.uri);
  return matches ? remote : undefined;
}

interface Resolved {
  readonly remote: RemoteConfig;
  readonly uriKey: string;
}

/**
 * Per-task resolution (remote, uriKey) is cached on the task object itself: listings return the
 * same frozen objects while a file exists, so a pass over 100,000 tasks costs map lookups only.
 * The cache belongs to one config; the caller starts a new one when the config changes.
 */
export type ResolutionCache = WeakMap<WaitingTask, Resolved | null>;

export function groupByUri(config: ReplicationConfig, waiting: readonly WaitingTask[], cache: ResolutionCache = new WeakMap()): Map<string, UriGroup> {
  const groups = new Map<string, UriGroup>();
  for (const item of waiting) {
    let resolved = cache.get(item);
    if (resolved === undefined) {
      const remote = remoteForTask(config, item.task);
      resolved = remote === undefined ? null : { remote, uriKey: computeUriKey(item.task.uri) };
      cache.set(item, resolved);
    }
    if (resolved === null) continue;
    const group = groups.get(resolved.uriKey);
    if (group === undefined) {
      groups.set(resolved.uriKey, { uriKey: resolved.uriKey, uri: item.task.uri, remote: resolved.remote, tasks: [item], oldestMtimeMs: item.mtimeMs, lane: laneOfTask(item.task) });
    } else {
      group.tasks.push(item);
      if (item.mtimeMs < group.oldestMtimeMs) group.oldestMtimeMs = item.mtimeMs;
      if (group.lane === 'bulk') group.lane = laneOfTask(item.task);
    }
  }
  return groups;
}
