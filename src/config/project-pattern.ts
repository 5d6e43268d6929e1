import { compileJavaRegex, isJavaRegexProblem, type JavaRegexProblem } from './java-regex.js';
import type { ProjectPattern, RemoteConfig } from './types.js';

/**
 * Gerrit's project filter syntax: `^regex` (a Java regular expression that must match the
 * whole name; the `^` is part of it), `prefix*` (a trailing `*`; `*` alone matches every
 * project), otherwise the exact name. Returns the pattern, or the error message.
 */
export function parseProjectPattern(text: string): ProjectPattern | string {
  const parsed = parse(text);
  return 'matches' in parsed ? parsed : parsed.message;
}

/** As parseProjectPattern, for a config key: the message also says what Gerrit did with it. */
export function parseConfiguredProjectPattern(text: string): ProjectPattern | string {
  const parsed = parse(text);
  if ('matches' in parsed) return parsed;
  if (!('kind' in parsed)) return parsed.message;
  if (parsed.kind === 'invalid') {
    return `${parsed.message}; Gerrit failed with PatternSyntaxException whenever it checked a project against it; fix the expression`;
  }
  return `${parsed.message} (Gerrit accepts it; refrelay refuses it rather than replicate other projects than Gerrit would)`;
}

function parse(text: string): ProjectPattern | JavaRegexProblem | { readonly message: string } {
  if (text === '') return { message: 'empty project pattern' };
  if (text.startsWith('^')) {
    const regex = compileJavaRegex(text);
    if (isJavaRegexProblem(regex)) return regex;
    return { text, kind: 'regex', matches: regex.matches };
  }
  if (text.endsWith('*')) {
    const prefix = text.slice(0, -1);
    return { text, kind: 'prefix', matches: (project) => project.startsWith(prefix) };
  }
  return { text, kind: 'exact', matches: (project) => project === text };
}

/**
 * Whether a remote replicates a project: no `projects` means every project,
 * and `excludeProjects` overrides `projects`.
 */
export function remoteWantsProject(remote: Pick<RemoteConfig, 'projects' | 'excludeProjects'>, project: string): boolean {
  if (remote.excludeProjects.some((pattern) => pattern.matches(project))) return false;
  return remote.projects.length === 0 || remote.projects.some((pattern) => pattern.matches(project));
}
