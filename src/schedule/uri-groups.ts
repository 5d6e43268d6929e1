import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { expandUrl } from '../config/remote-url.js';
import type { WaitingFolder, WaitingTask } from '../store/task-store.js';
import { FULL_SYNC_REF, uriKey as computeUriKey } from '../task/task.js';
import type { Lane } from '../task/task.js';
import { projectNameProblem, quoteUntrusted, refNameProblem } from '../task/names.js';
import { redactUrl } from '../runtime/redact.js';

/** The waiting work of one destination URI, as this node learned its folders (store/waiting-folders.ts). */
export interface UriGroup {
  readonly uriKey: string;
  readonly uri: string;
  /** The remote whose settings pace this URI (the first remote seen; URIs rarely span remotes). */
  readonly remote: RemoteConfig;
  /** Task files counted when its folders were learned (later arrivals ride along uncounted). */
  taskCount: number;
  oldestMtimeMs: number;
  /** Live when it has a live folder (the push carries every claimed ref anyway). */
  lane: Lane;
  /** When this node first saw its newest folder, our clock (WaitingFolder.seenAt): a handoff counts from there. */
  seenAt: number;
}

/** A waiting folder whose task says no node may push it, with the reason it will be parked under. */
export interface UntrustedFolder {
  readonly folder: WaitingFolder;
  readonly reason: string;
}

/**
 * The remote that may push a task found in the waiting folders of `folderUriKey`, or why none
 * may: its project or refs are not valid names (they become paths and git arguments), its remote
 * is not configured, its uri is not one of that remote's URLs for the project — the daemon never
 * pushes to a URL that only a file asked for — or it names another URI than its folder's.
 */
function resolveTask(config: ReplicationConfig, task: WaitingTask['task'], folderUriKey: string): RemoteConfig | string {
  const names = taskNameProblem(config, task);
  if (names !== undefined) return names;
  const remote = config.remotes.find((candidate) => candidate.name === task.remote);
  if (remote === undefined) return `remote ${quoteUntrusted(task.remote)} is not configured in ${config.file}`;
  if (!remote.urls.some((template) => expandUrl(template, task.project, remote.remoteNameStyle) === task.uri)) {
    return `uri ${quoteUntrusted(redactUrl(task.uri))} is not a URL of remote ${quoteUntrusted(task.remote)} for project ${quoteUntrusted(task.project)}`;
  }
  if (computeUriKey(task.uri) !== folderUriKey) return `a task for ${quoteUntrusted(redactUrl(task.uri))} in the waiting folder of another URI`;
  return remote;
}

/** Why a task's project or ref names may not become paths and git arguments, or undefined. */
export function taskNameProblem(config: Pick<ReplicationConfig, 'maxRefNameBytes'>, task: WaitingTask['task']): string | undefined {
  const project = projectNameProblem(task.project);
  if (project !== undefined) return `invalid project name ${quoteUntrusted(task.project)}: ${project}`;
  for (const ref of task.refs) {
    if (ref === FULL_SYNC_REF) continue;
    const problem = refNameProblem(ref, config.maxRefNameBytes);
    if (problem !== undefined) return `invalid ref name ${quoteUntrusted(ref)}: ${problem}`;
  }
  return undefined;
}

/** Why a task file found in the waiting folders of `folderUriKey` must not be pushed (see resolveTask), or undefined when it may be. */
export function untrustedReason(config: ReplicationConfig, task: WaitingTask['task'], folderUriKey: string): string | undefined {
  const resolved = resolveTask(config, task, folderUriKey);
  return typeof resolved === 'string' ? resolved : undefined;
}

/**
 * Per-folder resolution (remote, or why refused) is cached on the folder object itself: listings
 * return the same frozen objects until a folder is learned again, so a pass over 100,000 URIs
 * costs map lookups only. The cache belongs to one config; the caller starts a new one when the
 * config changes.
 */
export type ResolutionCache = WeakMap<WaitingFolder, RemoteConfig | string>;

/** `untrusted`, when given, receives the folders whose task no node may push (see untrustedReason). */
export function groupByUri(
  config: ReplicationConfig,
  folders: readonly WaitingFolder[],
  cache: ResolutionCache = new WeakMap(),
  untrusted?: UntrustedFolder[],
): Map<string, UriGroup> {
  const groups = new Map<string, UriGroup>();
  for (const folder of folders) {
    let resolved = cache.get(folder);
    if (resolved === undefined) {
      resolved = resolveTask(config, folder.sample.task, folder.uriKey);
      cache.set(folder, resolved);
    }
    if (typeof resolved === 'string') {
      untrusted?.push({ folder, reason: resolved });
      continue;
    }
    const group = groups.get(folder.uriKey);
    if (group === undefined) {
      groups.set(folder.uriKey, {
        uriKey: folder.uriKey,
        uri: folder.sample.task.uri,
        remote: resolved,
        taskCount: folder.taskCount,
        oldestMtimeMs: folder.oldestMtimeMs,
        lane: folder.lane,
        seenAt: folder.seenAt,
      });
    } else {
      group.taskCount += folder.taskCount;
      if (folder.oldestMtimeMs < group.oldestMtimeMs) group.oldestMtimeMs = folder.oldestMtimeMs;
      if (folder.lane === 'live') group.lane = 'live';
      if (folder.seenAt > group.seenAt) group.seenAt = folder.seenAt;
    }
  }
  return groups;
}
