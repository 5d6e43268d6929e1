import { remoteWantsProject } from '../config/project-pattern.js';
import { refExclusion } from '../config/ref-exclusion.js';
import { mapRefThroughRefspecs } from '../config/refspec.js';
import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { uriKey } from '../task/task-key.js';
import { destinationsOf, noRemoteNamed } from './plan-tasks.js';

/** One destination URL that must come to hold a ref, and the name the ref has there. */
export interface WaitDestination {
  readonly remote: RemoteConfig;
  /** As configured, credentials included: for git only, never shown. */
  readonly uri: string;
  readonly uriKey: string;
  /** The ref's name on the destination, through the remote's push refspecs. */
  readonly ref: string;
}

/** Why a remote does not replicate `ref` of `project`, or undefined when it does. */
function notReplicated(remote: RemoteConfig, project: string, ref: string): string | undefined {
  if (!remoteWantsProject(remote, project)) return `its projects/excludeProjects do not take ${JSON.stringify(project)}`;
  const excluded = refExclusion(remote, ref);
  if (excluded !== undefined) return excluded;
  if (mapRefThroughRefspecs(remote.push, ref) === undefined) return `none of its push refspecs takes ${ref}`;
  return undefined;
}

/**
 * The destinations `refrelay wait` follows: verify's destinations of the project (every URL of
 * the named remotes, or of all), less those whose refspecs or exclusions never take the ref.
 * A named remote that would never receive the ref is a usage error (the wait could only time
 * out): the message says why. Returns the destinations, or that message.
 */
export function waitDestinations(config: ReplicationConfig, project: string, ref: string, remoteNames: readonly string[]): WaitDestination[] | string {
  const unknown = noRemoteNamed(config, remoteNames);
  if (unknown !== undefined) return `${unknown} in ${config.file}`;
  for (const remote of config.remotes.filter((candidate) => remoteNames.includes(candidate.name))) {
    const why = notReplicated(remote, project, ref);
    if (why !== undefined) return `remote ${JSON.stringify(remote.name)} does not replicate ${ref} of ${project}: ${why}`;
  }
  const out = destinationsOf(config, [project], remoteNames).flatMap(({ remote, uri }) => {
    const mapped = notReplicated(remote, project, ref) === undefined ? mapRefThroughRefspecs(remote.push, ref) : undefined;
    return mapped === undefined ? [] : [{ remote, uri, uriKey: uriKey(uri), ref: mapped.dst }];
  });
  if (out.length === 0) return `no remote in ${config.file} replicates ${ref} of ${project}`;
  return out;
}
