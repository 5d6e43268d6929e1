import { UsageError } from '../errors.js';

/** `replication.maxRefNameBytes` when unset: longer ref names are refused at intake. */
export const DEFAULT_MAX_REF_NAME_BYTES = 4096;

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
  if (problem !== undefined) throw new UsageError(`invalid project name ${quoteUntrusted(project)}: ${problem}`);
  return project;
}

/**
 * The rules of `git check-ref-format` for a full ref name, plus: it must live under `refs/` and
 * be at most `maxBytes` bytes of UTF-8.
 */
export function refNameProblem(ref: string, maxBytes = DEFAULT_MAX_REF_NAME_BYTES): string | undefined {
  const bytes = Buffer.byteLength(ref, 'utf8');
  if (bytes > maxBytes) return `is ${bytes} bytes long, over the limit of ${maxBytes} bytes (replication.maxRefNameBytes)`;
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

export function assertRefName(ref: string, maxBytes = DEFAULT_MAX_REF_NAME_BYTES): string {
  const problem = refNameProblem(ref, maxBytes);
  if (problem !== undefined) throw new UsageError(`invalid ref name ${quoteRefName(ref)}: ${problem}`);
  return ref;
}

const QUOTED_PREFIX_CHARS = 64;

/**
 * A value from untrusted input (a task file, argv) for a message: JSON-quoted (control characters
 * escaped) and whole when short, else its first characters, "…" and its length, so that a field
 * of up to a megabyte does not flood a terminal, a log line or a failed/*.reason.json.
 */
export function quoteUntrusted(value: string): string {
  const chars = Array.from(value); // code points: a cut never splits a surrogate pair
  if (chars.length <= QUOTED_PREFIX_CHARS) return JSON.stringify(value);
  return `${JSON.stringify(chars.slice(0, QUOTED_PREFIX_CHARS).join(''))}… (${chars.length} characters)`;
}

/** Longer than any remote name a config can hold in practice: Gerrit names a fan-out file after its remote. */
const REMOTE_SHOWN_MAX = 255;

/**
 * A task's remote for a view, a log field or an event: as it is up to 255 characters, else
 * quoteUntrusted's cut form. A refused task's remote may be a megabyte.
 */
export function shownRemote(remote: string): string {
  return remote.length <= REMOTE_SHOWN_MAX ? remote : quoteUntrusted(remote);
}

/** A ref name for a message (see quoteUntrusted). */
export const quoteRefName = quoteUntrusted;
