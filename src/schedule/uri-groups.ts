import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { expandUrl } from '../config/remote-url.js';
import type { WaitingTask } from '../store/store-types.js';
import { FULL_SYNC_REF, uriKey as computeUriKey } from '../task/task.js';
import type { Lane } from './fair-share.js';
import { projectNameProblem, quoteUntrusted, refNameProblem } from '../task/names.js';
import { redactUrl } from '../runtime/redact.js';

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

interface Resolved {
  readonly remote: RemoteConfig;
  readonly uriKey: string;
}

/** Why no node with this config may push a task: task files are input from anyone who can write the store. */
interface Refused {
  readonly refused: string;
  readonly uriKey: string;
}

/** A waiting task this node must never push, with the reason it will be parked under. */
export interface UntrustedTask {
  readonly item: WaitingTask;
  readonly reason: string;
  readonly uriKey: string;
}

/**
 * The remote that may push a task, or why none may: its project or refs are not valid names
 * (they become paths and git arguments), its remote is not configured, or its uri is not one of
 * that remote's URLs for the project — the daemon never pushes to a URL that only a file asked for.
 */
function resolveTask(config: ReplicationConfig, task: WaitingTask['task']): RemoteConfig | string {
  const names = taskNameProblem(config, task);
  if (names !== undefined) return names;
  const remote = config.remotes.find((candidate) => candidate.name === task.remote);
  if (remote === undefined) return `remote ${quoteUntrusted(task.remote)} is not configured in ${config.file}`;
  if (!remote.urls.some((template) => expandUrl(template, task.project, remote.remoteNameStyle) === task.uri)) {
    return `uri ${quoteUntrusted(redactUrl(task.uri))} is not a URL of remote ${quoteUntrusted(task.remote)} for project ${quoteUntrusted(task.project)}`;
  }
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

/** Why a task file must not be pushed (see resolveTask), or undefined when it may be. */
export function untrustedReason(config: ReplicationConfig, task: WaitingTask['task']): string | undefined {
  const resolved = resolveTask(config, task);
  return typeof resolved === 'string' ? resolved : undefined;
}

/**
 * Per-task resolution (remote, uriKey) is cached on the task object itself: listings return the
 * same frozen objects while a file exists, so a pass over 100,000 tasks costs map lookups only.
 * The cache belongs to one config; the caller starts a new one when the config changes.
 */
export type ResolutionCache = WeakMap<WaitingTask, Resolved | Refused>;

/** `untrusted`, when given, receives the tasks no node may push (see untrustedReason). */
export function groupByUri(
  config: ReplicationConfig,
  waiting: readonly WaitingTask[],
  cache: ResolutionCache = new WeakMap(),
  untrusted?: UntrustedTask[],
): Map<string, UriGroup> {
  const groups = new Map<string, UriGroup>();
  for (const item of waiting) {
    let resolved = cache.get(item);
    if (resolved === undefined) {
      const remote = resolveTask(config, item.task);
      const uriKey = computeUriKey(item.task.uri);
      resolved = typeof remote === 'string' ? { refused: remote, uriKey } : { remote, uriKey };
      cache.set(item, resolved);
    }
    if ('refused' in resolved) {
      untrusted?.push({ item, reason: resolved.refused, uriKey: resolved.uriKey });
      continue;
    }
    const group = groups.get(resolved.uriKey);
    if (group === undefined) {
      groups.set(resolved.uriKey, {
        uriKey: resolved.uriKey,
        uri: item.task.uri,
        remote: resolved.remote,
        tasks: [item],
        oldestMtimeMs: item.mtimeMs,
        lane: laneOfTask(item.task),
      });
    } else {
      group.tasks.push(item);
      if (item.mtimeMs < group.oldestMtimeMs) group.oldestMtimeMs = item.mtimeMs;
      if (group.lane === 'bulk') group.lane = laneOfTask(item.task);
    }
  }
  return groups;
}
