import { UsageError } from '../errors.js';

// Control characters (C0, DEL) never belong in a project or ref name; they break logs and terminals.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A project name becomes part of filesystem paths (`<basePath>/<project>.git`) and of git argv,
 * so it must not escape its folder or look like an option.
 */
export function projectNameProblem(project: string): string | undefined {
  if (project.length === 0) return 'is empty';
  if (CONTROL.test(project)) return 'contains a control character';
  if (project.startsWith('-')) return 'starts with "-"';
  if (project.startsWith('/')) return 'starts with "/"';
  if (project.includes('\\')) return 'contains a backslash';
  if (project.endsWith('/')) return 'ends with "/"';
  for (const segment of project.split('/')) {
    if (segment === '..') return 'has a ".." segment';
    if (segment === '.') return 'has a "." segment';
    if (segment === '') return 'has an empty segment ("//")';
  }
  return undefined;
}

export function assertProjectName(project: string): string {
  const problem = projectNameProblem(project);
  if (problem !== undefined) throw new UsageError(`invalid project name ${JSON.stringify(project)}: ${problem}`);
  return project;
}

/** The rules of `git check-ref-format` for a full ref name, plus: it must live under `refs/`. */
export function refNameProblem(ref: string): string | undefined {
  if (!ref.startsWith('refs/')) return 'must start with "refs/"';
  if (CONTROL.test(ref)) return 'contains a control character';
  if (/[ ~^:?*[\\]/.test(ref)) return 'contains one of space ~ ^ : ? * [ \\';
  if (ref.includes('..')) return 'contains ".."';
  if (ref.includes('@{')) return 'contains "@{"';
  if (ref.includes('//')) return 'contains "//"';
  if (ref.endsWith('/') || ref.endsWith('.')) return 'ends with "/" or "."';
  for (const component of ref.split('/')) {
    if (component.startsWith('.')) return 'has a component starting with "."';
    if (component.endsWith('.lock')) return 'has a component ending with ".lock"';
  }
  return undefined;
}

export function assertRefName(ref: string): string {
  const problem = refNameProblem(ref);
  if (problem !== undefined) throw new UsageError(`invalid ref name ${JSON.stringify(ref)}: ${problem}`);
  return ref;
}
