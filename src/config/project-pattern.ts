import type { ProjectPattern, RemoteConfig } from './types.js';

/**
 * Gerrit's project filter syntax: `^regex` (must match the whole name),
 * `prefix*` (a trailing `*`; `*` alone matches every project), otherwise the
 * exact name. Returns the pattern, or the error message.
 */
export function parseProjectPattern(text: string): ProjectPattern | string {
  if (text === '') return 'empty project pattern';
  if (text.startsWith('^')) {
    const regex = compileWholeMatch(text);
    if (typeof regex === 'string') return regex;
    return { text, kind: 'regex', matches: (project) => regex.test(project) };
  }
  if (text.endsWith('*')) {
    const prefix = text.slice(0, -1);
    return { text, kind: 'prefix', matches: (project) => project.startsWith(prefix) };
  }
  return { text, kind: 'exact', matches: (project) => project === text };
}

/**
 * Compiles a regex that must match the whole input, as Java's `matches()` does
 * in Gerrit. Returns the RegExp or `invalid regular expression: …`.
 */
export function compileWholeMatch(source: string): RegExp | string {
  try {
    // Compile as written first, so the error message shows the user's text, not our wrapper.
    new RegExp(source);
  } catch (error) {
    return `invalid regular expression: ${regexErrorText(error)}`;
  }
  const body = source.startsWith('^') ? source.slice(1) : source;
  return new RegExp(`^(?:${body})$`);
}

function regexErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^Invalid regular expression:\s*/, '');
}

/**
 * Whether a remote replicates a project: no `projects` means every project,
 * and `excludeProjects` overrides `projects`.
 */
export function remoteWantsProject(
  remote: Pick<RemoteConfig, 'projects' | 'excludeProjects'>,
  project: string,
): boolean {
  if (remote.excludeProjects.some((pattern) => pattern.matches(project))) return false;
  return remote.projects.length === 0 || remote.projects.some((pattern) => pattern.matches(project));
}
