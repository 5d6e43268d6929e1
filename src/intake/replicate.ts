import type { ReplicationConfig } from '../config/types.js';
import { parseProjectPattern } from '../config/project-pattern.js';
import { UsageError } from '../errors.js';
import type { TaskStore } from '../store/task-store.js';
import { projectNameProblem, quoteUntrusted } from '../task/names.js';
import { FULL_SYNC_REF, type Task } from '../task/task.js';
import { destinationsOf, noRemoteNamed } from './plan-tasks.js';

export interface ReplicateRequest {
  /** Exact names, `prefix/*` or `^regex`; empty with `all`. */
  readonly patterns: readonly string[];
  readonly all: boolean;
  readonly remotes: readonly string[];
  /** Only URLs (template or expanded) containing this text. */
  readonly urlSubstring: string | undefined;
}

/** The full-sync tasks a `replicate` request stands for: one per matching project and URL. */
export function planFullSync(config: ReplicationConfig, projects: readonly string[], request: ReplicateRequest): Task[] {
  if (request.all && request.patterns.length > 0) throw new UsageError('replicate: give --all or project patterns, not both');
  if (!request.all && request.patterns.length === 0) throw new UsageError('replicate: give --all or at least one project pattern');
  const matchers = request.patterns.map((text) => {
    const pattern = parseProjectPattern(text);
    if (typeof pattern === 'string') throw new UsageError(`replicate: project pattern ${JSON.stringify(text)}: ${pattern}`);
    // An exact name no project can have is a mistake to say, not "Nothing to replicate" (as for enqueue --project).
    const nameProblem = pattern.kind === 'exact' ? projectNameProblem(text) : undefined;
    if (nameProblem !== undefined) throw new UsageError(`replicate: invalid project name ${quoteUntrusted(text)}: ${nameProblem}`);
    return pattern;
  });
  const unknown = noRemoteNamed(config, request.remotes);
  if (unknown !== undefined) throw new UsageError(`replicate: ${unknown}`);
  const wanted = request.all ? projects : projects.filter((project) => matchers.some((matcher) => matcher.matches(project)));
  const { urlSubstring } = request;
  return destinationsOf(config, wanted, request.remotes)
    .filter(({ template, uri }) => urlSubstring === undefined || template.includes(urlSubstring) || uri.includes(urlSubstring))
    .map(({ project, uri, remote }) => ({ project, refs: [FULL_SYNC_REF], uri, remote: remote.name }));
}

/**
 * Queue the tasks. With `now`, each new file's mtime is moved back by its remote's
 * replicationDelay, so the distributor sees the batch as already due (the task format stays
 * what every node reads). The mtime is set before the file is published: a running node lists
 * it already backdated, never with the later time first.
 */
export async function queueFullSync(
  config: ReplicationConfig,
  store: TaskStore,
  tasks: readonly Task[],
  now: boolean,
  clockNow: number,
): Promise<Array<{ task: Task; key: string; created: boolean }>> {
  const mtimeOf = (task: Task): Date => {
    const remote = config.remotes.find((candidate) => candidate.name === task.remote);
    const backdate = Math.max(remote?.replicationDelayMs ?? 0, config.distributionIntervalMs) + config.randomDelayMs;
    return new Date(clockNow - backdate);
  };
  const results = await store.createMany(tasks, now ? { mtimeOf } : {});
  return tasks.map((task, i) => ({ task, key: results[i]!.key, created: results[i]!.created }));
}
