import { remoteWantsProject } from '../config/project-pattern.js';
import { expandUrl } from '../config/remote-url.js';
import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { redactUrl } from '../runtime/redact.js';
import type { Task } from '../task/task.js';
import { jgitAsciiString } from './jgit-uri.js';
import { quoteUntrusted } from '../task/names.js';
import { refsForRemote } from './plan-tasks.js';

/** A task file of Gerrit's plugin as refrelay queues it, or why no configured remote pushes it. */
export type GerritTaskPlacement =
  | {
      readonly task: Task;
      /** The remote the file names is not the one queued (renamed, or its URL moved to another remote). */
      readonly remoteRenamed: boolean;
    }
  | { readonly problem: string };

interface Owner {
  readonly remote: RemoteConfig;
  /** refrelay's expansion of the remote's URL for the project: the uri the task is queued under. */
  readonly url: string;
}

/**
 * Finds the configured remote that pushes a task Gerrit's plugin stored, as the plugin finds it on
 * replay (DestinationsCollection.getDestinations, Destination.wouldPush): by URI, not by remote
 * name. A remote owns the task when one of its URLs, expanded for the task's project, is the
 * task's `uri` under JGit's URI equality (see jgit-uri.ts), its projects filters take the project,
 * and its push refspecs take one of the refs. Among owners the remote the file names wins, else
 * the first in config order. The queued task carries refrelay's own expansion of the URL (so it
 * shares its URI lock and key with tasks refrelay queues itself) and only the refs that remote
 * pushes. Project and ref names are checked by the caller first.
 */
export function placeGerritTask(config: Pick<ReplicationConfig, 'remotes'>, task: Task): GerritTaskPlacement {
  const stored = jgitAsciiString(task.uri);
  const uri = quoteUntrusted(redactUrl(task.uri));
  const project = quoteUntrusted(task.project);
  if (stored === undefined) return { problem: `uri ${uri} is not a URI Gerrit's plugin can read (JGit refuses it)` };
  const owners = ownersOf(config.remotes, task.project, stored);
  if (owners.length === 0) {
    return { problem: `uri ${uri} is not a URL of any configured remote for project ${project} (the file names remote ${quoteUntrusted(task.remote)})` };
  }
  const wanting = owners.filter((owner) => remoteWantsProject(owner.remote, task.project));
  if (wanting.length === 0) return { problem: `${remotesWord(owners)} ${uri}, but projects/excludeProjects leave out project ${project}` };
  const pushing = wanting.filter((owner) => refsForRemote(owner.remote, task.refs).length > 0);
  if (pushing.length === 0) return { problem: `${remotesWord(wanting)} ${uri}, but no push refspec takes any of the task's refs` };
  const chosen = pushing.find((owner) => owner.remote.name === task.remote) ?? pushing[0]!;
  return {
    task: { project: task.project, refs: refsForRemote(chosen.remote, task.refs), uri: chosen.url, remote: chosen.remote.name },
    remoteRenamed: chosen.remote.name !== task.remote,
  };
}

/** Every remote with a URL that is `stored` for this project; one entry per remote (its first such URL). */
function ownersOf(remotes: readonly RemoteConfig[], project: string, stored: string): Owner[] {
  const owners: Owner[] = [];
  for (const remote of remotes) {
    for (const template of remote.urls) {
      const url = expandUrl(template, project, remote.remoteNameStyle);
      if (jgitAsciiString(url) === stored) {
        owners.push({ remote, url });
        break;
      }
    }
  }
  return owners;
}

function remotesWord(owners: readonly Owner[]): string {
  const names = owners.map((owner) => JSON.stringify(owner.remote.name)).join(', ');
  return owners.length === 1 ? `remote ${names} has uri` : `remotes ${names} have uri`;
}
