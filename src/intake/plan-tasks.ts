import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { mapRefThroughRefspecs } from '../config/refspec.js';
import { refExclusion } from '../config/ref-exclusion.js';
import { remoteWantsProject } from '../config/project-pattern.js';
import { expandUrl } from '../config/remote-url.js';
import { FULL_SYNC_REF, type Task } from '../task/task.js';

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

export interface PlanOptions {
  /** Only these remotes (by name); all when empty or absent. */
  readonly remoteNames?: readonly string[];
}

/**
 * Split one ref update into one task per destination URI. Filtering happens here, before
 * anything is written, so a task file never exists for an update that would not be pushed.
 */
export function planTasks(config: ReplicationConfig, project: string, refs: readonly string[], options: PlanOptions = {}): Task[] {
  const tasks: Task[] = [];
  const only = options.remoteNames !== undefined && options.remoteNames.length > 0 ? new Set(options.remoteNames) : undefined;
  for (const remote of config.remotes) {
    if (only !== undefined && !only.has(remote.name)) continue;
    if (!remoteWantsProject(remote, project)) continue;
    const kept = refsForRemote(remote, refs);
    if (kept.length === 0) continue;
    for (const template of remote.urls) {
      tasks.push({ project, refs: kept, uri: expandUrl(template, project, remote.remoteNameStyle), remote: remote.name });
    }
  }
  return tasks;
}
