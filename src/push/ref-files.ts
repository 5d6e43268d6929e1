import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Ref names that are safe to use as paths under the git dir (no escape, nothing odd). */
function plainRefName(ref: string): boolean {
  return /^refs\/[A-Za-z0-9._\-/+@]+$/.test(ref) && !ref.includes('..') && !ref.includes('//') && !ref.endsWith('/') && !ref.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'));
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/**
 * The current values of a few refs, read straight from a bare repository's files-backend ref
 * store (loose ref files, then packed-refs) instead of spawning `git for-each-ref`: a push of a
 * handful of refs otherwise pays a second process start. Loose refs are read before packed-refs,
 * the order in which `git pack-refs` and ref deletion keep a ref visible. Returns undefined when
 * the answer would not be certain — reftable or worktree repositories, symbolic refs, anything
 * unexpected — and the caller asks git instead.
 */
export async function readRefsFromFiles(gitDir: string, refs: readonly string[]): Promise<Map<string, string> | undefined> {
  if (!refs.every(plainRefName)) return undefined;
  try {
    const [head, refsDir] = await Promise.all([stat(join(gitDir, 'HEAD')), stat(join(gitDir, 'refs'))]);
    if (!head.isFile() || !refsDir.isDirectory()) return undefined;
    for (const marker of ['reftable', 'commondir']) {
      const found = await stat(join(gitDir, marker)).then(() => true, (error: unknown) => (errno(error) === 'ENOENT' ? false : undefined));
      if (found !== false) return undefined;
    }
  } catch {
    return undefined;
  }
  const values = new Map<string, string>();
  const notLoose: string[] = [];
  for (const ref of refs) {
    let text: string;
    try {
      text = (await readFile(join(gitDir, ref), 'utf8')).trim();
    } catch (error) {
      const code = errno(error);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') {
        notLoose.push(ref);
        continue;
      }
      return undefined;
    }
    if (!OBJECT_ID.test(text)) return undefined; // a symbolic ref, or a half-written file
    values.set(ref, text);
  }
  if (notLoose.length === 0) return values;
  let packed: string;
  try {
    packed = await readFile(join(gitDir, 'packed-refs'), 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return values;
    return undefined;
  }
  const wanted = new Set(notLoose);
  for (const line of packed.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const ref = line.slice(space + 1);
    if (wanted.has(ref)) {
      const oid = line.slice(0, space);
      if (!OBJECT_ID.test(oid)) return undefined;
      values.set(ref, oid);
    }
  }
  return values;
}
