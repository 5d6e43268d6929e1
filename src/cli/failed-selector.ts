import { parseProjectPattern } from '../config/project-pattern.js';
import type { ProjectPattern } from '../config/types.js';
import { quoteUntrusted } from '../task/names.js';
import type { Task } from '../task/task.js';

/** What `refrelay failed drop` was asked to drop, as given on the command line. */
export interface FailedSelectorArgs {
  readonly all: boolean;
  readonly remote?: string | undefined;
  readonly uri?: string | undefined;
  readonly project?: string | undefined;
  /** Task keys as `failed list` shows them; `<key>.json` (the file name) is taken too. */
  readonly keys: readonly string[];
}

/**
 * Every part given must match (remote exactly, uri as a substring as `retry --uri` does, project
 * as an exact name, `prefix/*` or `^regex` as `replicate` takes it, key among the keys); `all`
 * stands alone.
 */
export interface FailedSelector {
  readonly all: boolean;
  readonly remote?: string;
  readonly uri?: string;
  readonly project?: ProjectPattern;
  readonly keys?: ReadonlySet<string>;
}

const TASK_KEY = /^[0-9a-f]{40}$/;

/** An option given an empty value (`--uri ''`, which every URI contains): it would select everything instead of narrowing. */
export function emptyOptionProblem(options: Readonly<Record<string, string | undefined>>): string | undefined {
  const empty = Object.entries(options).find(([, value]) => value === '');
  return empty === undefined ? undefined : `${empty[0]} needs a value`;
}

/** The selector, or the usage problem to report (exit 2). */
export function parseFailedSelector(args: FailedSelectorArgs): FailedSelector | { readonly problem: string } {
  const narrowed = args.remote !== undefined || args.uri !== undefined || args.project !== undefined || args.keys.length > 0;
  if (!args.all && !narrowed) return { problem: 'give --all, --remote NAME, --uri SUBSTRING, --project PATTERN or TASKKEY… (see refrelay failed list)' };
  // Dropping is not undone by a retry: a selector that says "all" and something narrower is a mistake to ask about, not to guess.
  if (args.all && narrowed) return { problem: '--all drops every failed task; give it alone, or narrow with --remote, --uri, --project or TASKKEY… instead' };
  if (args.all) return { all: true };
  const keys = new Set<string>();
  for (const given of args.keys) {
    const key = given.endsWith('.json') ? given.slice(0, -'.json'.length) : given;
    if (!TASK_KEY.test(key)) return { problem: `${quoteUntrusted(given)} is not a task key (40 hex digits, as refrelay failed list shows them)` };
    keys.add(key);
  }
  const empty = emptyOptionProblem({ '--remote': args.remote, '--uri': args.uri, '--project': args.project });
  if (empty !== undefined) return { problem: empty };
  let project: ProjectPattern | undefined;
  if (args.project !== undefined) {
    const parsed = parseProjectPattern(args.project);
    if (typeof parsed === 'string') return { problem: `project pattern ${quoteUntrusted(args.project)}: ${parsed}` };
    project = parsed;
  }
  return {
    all: false,
    ...(args.remote === undefined ? {} : { remote: args.remote }),
    ...(args.uri === undefined ? {} : { uri: args.uri }),
    ...(project === undefined ? {} : { project }),
    ...(keys.size === 0 ? {} : { keys }),
  };
}

/** Whether the failed task `key` (its task file's stem) with content `task` is selected. */
export function selectsFailed(selector: FailedSelector, key: string, task: Task): boolean {
  if (selector.all) return true;
  if (selector.remote !== undefined && task.remote !== selector.remote) return false;
  if (selector.uri !== undefined && !task.uri.includes(selector.uri)) return false;
  if (selector.project !== undefined && !selector.project.matches(task.project)) return false;
  if (selector.keys !== undefined && !selector.keys.has(key)) return false;
  return true;
}

/** The keys asked for by name that matched no failed task: said, so a mistyped key is not silently a no-op. */
export function keysNotFound(selector: FailedSelector, found: Iterable<string>): string[] {
  if (selector.keys === undefined) return [];
  const seen = new Set(found);
  return [...selector.keys].filter((key) => !seen.has(key)).sort();
}
