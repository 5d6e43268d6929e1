import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { expandUrl } from '../config/remote-url.js';
import type { WaitingTask } from '../store/store-types.js';
import { uriKey as computeUriKey } from '../task/task.js';

/** Every waiting task of one destination URI. */
export interface UriGroup {
  readonly uriKey: string;
  readonly uri: string;
  /** The remote whose settings pace this URI (the first remote seen; URIs rarely span remotes). */
  readonly remote: RemoteConfig;
  readonly tasks: WaitingTask[];
  oldestMtimeMs: number;
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

/** `uriKeys` caches sha1(uri) across passes: a pass over 100,000 tasks must not hash them all. */
export function groupByUri(
  config: ReplicationConfig,
  waiting: readonly WaitingTask[],
  uriKeys: Map<string, string> = new Map(),
): Map<string, UriGroup> {
  const groups = new Map<string, UriGroup>();
  const remoteCache = new Map<string, RemoteConfig | null>();
  for (const item of waiting) {
    const cacheKey = `${item.task.remote}\u0000${item.task.project}\u0000${item.task.uri}`;
    let remote = remoteCache.get(cacheKey);
    if (remote === undefined) {
      remote = remoteForTask(config, item.task) ?? null;
      remoteCache.set(cacheKey, remote);
    }
    if (remote === null) continue;
    let key = uriKeys.get(item.task.uri);
    if (key === undefined) {
      key = computeUriKey(item.task.uri);
      uriKeys.set(item.task.uri, key);
    }
    const group = groups.get(key);
    if (group === undefined) {
      groups.set(key, { uriKey: key, uri: item.task.uri, remote, tasks: [item], oldestMtimeMs: item.mtimeMs });
    } else {
      group.tasks.push(item);
      if (item.mtimeMs < group.oldestMtimeMs) group.oldestMtimeMs = item.mtimeMs;
    }
  }
  return groups;
}
