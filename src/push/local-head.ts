import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a repository's HEAD is: a symbolic ref to `target`, detached, or not known from its file. */
export type HeadState = { readonly target: string } | 'detached' | 'unknown';

/**
 * HEAD of a bare files-backend repository, from `<gitDir>/HEAD`, without starting git. 'unknown'
 * when the file cannot say: a work tree (no such file), reftable (which keeps the placeholder
 * `refs/heads/.invalid` there), an I/O error, anything odd. The caller then asks git.
 */
export function headFromFile(gitDir: string): HeadState {
  let text: string;
  try {
    text = readFileSync(join(gitDir, 'HEAD'), 'latin1');
  } catch {
    return 'unknown';
  }
  return parseHead(text);
}

export function parseHead(text: string): HeadState {
  const line = text.replace(/[ \t\r\n]+$/, '');
  const symbolic = /^ref: (refs\/\S+)$/.exec(line)?.[1];
  if (symbolic !== undefined) return symbolic === 'refs/heads/.invalid' ? 'unknown' : { target: symbolic };
  return /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(line) ? 'detached' : 'unknown';
}

/**
 * Where HEAD points, undefined when detached or unreadable. The file answers for bare files-backend
 * repositories; `askGit` (`git symbolic-ref -q HEAD`) runs only when it cannot.
 */
export async function headTarget(gitDir: string, askGit: () => Promise<{ exitCode: number | null; stdout: string }>): Promise<string | undefined> {
  const head = headFromFile(gitDir);
  if (head !== 'unknown') return head === 'detached' ? undefined : head.target;
  const result = await askGit();
  return result.exitCode === 0 ? result.stdout.trim() || undefined : undefined;
}
