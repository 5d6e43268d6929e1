import type { ProjectPattern } from '../config/types.js';

export interface ProjectSelection {
  /** The projects any pattern matches; every project when there are no patterns. */
  readonly selected: readonly string[];
  /** Patterns that matched no project: most likely a typo, or the wrong basePath. */
  readonly unmatched: readonly ProjectPattern[];
}

export function selectProjects(projects: readonly string[], patterns: readonly ProjectPattern[]): ProjectSelection {
  if (patterns.length === 0) return { selected: projects, unmatched: [] };
  return {
    selected: projects.filter((project) => patterns.some((pattern) => pattern.matches(project))),
    unmatched: patterns.filter((pattern) => !projects.some((project) => pattern.matches(project))),
  };
}

/**
 * `no project "app"` for an exact name, `"team/*" matched no project` for a prefix or regex;
 * several are joined with "; ".
 */
export function describeUnmatched(unmatched: readonly ProjectPattern[]): string {
  return unmatched
    .map((pattern) => (pattern.kind === 'exact' ? `no project ${JSON.stringify(pattern.text)}` : `${JSON.stringify(pattern.text)} matched no project`))
    .join('; ');
}
