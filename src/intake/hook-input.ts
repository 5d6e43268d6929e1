import { resolve, relative, sep } from 'node:path';
import { UsageError } from '../errors.js';

export interface RefUpdateLine {
  readonly oldValue: string;
  readonly newValue: string;
  readonly ref: string;
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * Parse `<old> <new> <ref>` lines as git hands them to `post-receive` and `reference-transaction`.
 * reference-transaction may pass symbolic values (`ref:refs/heads/x`) for symref updates; only the
 * ref name matters to us, so values are checked loosely.
 */
export function parseHookInput(text: string): RefUpdateLine[] {
  const updates: RefUpdateLine[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const parts = line.split(' ');
    if (parts.length !== 3 || !isValue(parts[0]!) || !isValue(parts[1]!) || parts[2] === '') {
      throw new UsageError(`stdin line ${index + 1}: expected "<old> <new> <ref>", got ${JSON.stringify(line.slice(0, 200))}`);
    }
    updates.push({ oldValue: parts[0]!, newValue: parts[1]!, ref: parts[2]! });
  }
  return updates;
}

function isValue(value: string): boolean {
  return OBJECT_ID.test(value) || value.startsWith('ref:');
}

/**
 * The project of a repository at `gitDir`: its path relative to `basePath`, without `.git`.
 * Non-bare repositories (`…/project/.git`) map to the folder that holds `.git`.
 */
export function projectFromGitDir(gitDir: string, basePath: string): string {
  const absolute = resolve(gitDir);
  let rel = relative(resolve(basePath), absolute);
  if (rel === '' || rel.startsWith('..') || resolve(basePath, rel) !== absolute) {
    throw new UsageError(`repository ${absolute} is not under basePath ${resolve(basePath)}; pass --project`);
  }
  rel = rel.split(sep).join('/');
  if (rel.endsWith('/.git')) rel = rel.slice(0, -'/.git'.length);
  else if (rel.endsWith('.git')) rel = rel.slice(0, -'.git'.length);
  return rel;
}
