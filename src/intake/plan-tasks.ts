import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { mapRefThroughRefspecs } from '../config/refspec.js';
import { refExclusion } from '../config/ref-exclusion.js';
import { remoteWantsProject } from '../config/project-pattern.js';
import { expandUrl } from '../config/remote-url.js';
import { FULL_SYNC_REF, tasksWithinSize, type Task } from '../task/task.js';

/**
 * Refs of an update that this remote would actually push: a refspec maps them, and `refExclusion`
 * (refs/meta/config, NoteDb meta refs, automerge cache, excludedRefsPattern) keeps none of them back.
 */
export function refsForRemote(remote: RemoteConfig, refs: readonly string[]): string[] {
  const kept: string[] = [];
  for (const ref of refs) {
    if (ref === FULL_SYNC_REF) {
      kept.push(ref);
      continue;
    }
    if (mapRefThroughRefspecs(remote.push, ref) === undefined) continue;
    if (refExclusion(remote, ref) !== undefined) continue;
    kept.push(ref);
  }
  return kept;
}

/** One URL of a remote that replicates a project. */
export interface Destination {
  readonly project: string;
  readonly remote: RemoteConfig;
  /** The remote's `url` as written, before `${name}` is expanded. */
  readonly template: string;
  readonly uri: string;
}

/** Every URL of each remote (all, or those named) that wants each project: projects, then remotes, then URLs in config order. */
export function destinationsOf(config: ReplicationConfig, projects: readonly string[], remoteNames: readonly string[]): Destination[] {
  const out: Destination[] = [];
  for (const project of projects) {
    for (const remote of config.remotes) {
      if (remoteNames.length > 0 && !remoteNames.includes(remote.name)) continue;
      if (!remoteWantsProject(remote, project)) continue;
      for (const template of remote.urls) out.push({ project, remote, template, uri: expandUrl(template, project, remote.remoteNameStyle) });
    }
  }
  return out;
}

/** `no remote named "a", "b"` for the names the config has no remote of, or undefined. */
export function noRemoteNamed(config: ReplicationConfig, names: readonly string[]): string | undefined {
  const unknown = names.filter((name) => !config.remotes.some((remote) => remote.name === name));
  return unknown.length === 0 ? undefined : `no remote named ${unknown.map((name) => JSON.stringify(name)).join(', ')}`;
}

export interface PlanOptions {
  /** Only these remotes (by name); all when empty or absent. */
  readonly remoteNames?: readonly string[];
}

/**
 * Split one ref update into one task per destination URI. Filtering happens here, before
 * anything is written, so a task file never exists for an update that would not be pushed.
 */
export function planTasks(config: ReplicationConfig, project: string, refs: readonly string[], options: PlanOptions = {}): Task[] {
  return destinationsOf(config, [project], options.remoteNames ?? []).flatMap(({ remote, uri }) => {
    const kept = refsForRemote(remote, refs);
    return kept.length === 0 ? [] : tasksWithinSize({ project, refs: kept, uri, remote: remote.name });
  });
}
