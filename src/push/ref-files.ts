import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Ref names that are safe to use as paths under the git dir (no escape, nothing odd). */
function plainRefName(ref: string): boolean {
  return /^refs\/[A-Za-z0-9._\-/+@]+$/.test(ref) && !ref.includes('..') && !ref.includes('//') && !ref.endsWith('/') && !ref.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'));
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

const NOT_LOOSE = Symbol('not a loose ref');

/** Longer than any loose ref file holding an object id ("<64 hex digits>\n"). */
const refBuffer = Buffer.alloc(128);

/**
 * A loose ref file's trimmed text: open, one read, close — a push reads 50 of them at a time, and
 * readFileSync adds an fstat and a second read per file. NOT_LOOSE when there is no such file
 * (or a folder there); undefined for anything else (an I/O error, a file too long to be an object id).
 */
function readLooseRef(path: string): string | typeof NOT_LOOSE | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    const code = errno(error);
    return code === 'ENOENT' || code === 'ENOTDIR' ? NOT_LOOSE : undefined;
  }
  let text: string | typeof NOT_LOOSE | undefined;
  try {
    const length = readSync(fd, refBuffer, 0, refBuffer.length, 0);
    // Only the whitespace git itself allows after the id: latin1 would turn a stray 0xA0 into a
    // space that trim() removes.
    text = length === refBuffer.length ? undefined : refBuffer.toString('latin1', 0, length).replace(/[ \t\r\n]+$/, '');
  } catch (error) {
    text = errno(error) === 'EISDIR' ? NOT_LOOSE : undefined;
  }
  try {
    closeSync(fd);
  } catch {
    return undefined; // an I/O error on close (NFS): ask git
  }
  return text;
}

/**
 * The current values of a few refs, read straight from a bare repository's files-backend ref
 * store (loose ref files, then packed-refs) instead of spawning `git for-each-ref`: a push of a
 * handful of refs otherwise pays a second process start. Loose refs are read before packed-refs,
 * the order in which `git pack-refs` and ref deletion keep a ref visible. Returns undefined when
 * the answer would not be certain — reftable or worktree repositories, symbolic refs, anything
 * unexpected — and the caller asks git instead.
 *
 * The reads are synchronous on purpose: the source repository is the master's own, the files hold
 * one line each and the caller passes at most a few hundred refs. Through the thread pool every
 * file costs four round trips (open, fstat, read, close), and while concurrent pushes keep the
 * CPUs busy each round trip waits for the event loop to be scheduled again — that made the read of
 * 50 refs take longer than the push itself.
 */
export function readRefsFromFiles(gitDir: string, refs: readonly string[]): Map<string, string> | undefined {
  if (!refs.every(plainRefName)) return undefined;
  try {
    if (!statSync(join(gitDir, 'HEAD')).isFile() || !statSync(join(gitDir, 'refs')).isDirectory()) return undefined;
    for (const marker of ['reftable', 'commondir']) {
      // throwIfNoEntry: false answers undefined for ENOENT; any other error throws and means "ask git".
      if (statSync(join(gitDir, marker), { throwIfNoEntry: false }) !== undefined) return undefined;
    }
  } catch {
    return undefined;
  }
  const values = new Map<string, string>();
  const notLoose: string[] = [];
  // Ref names were checked above (refs/…, no "..", no "//"): after the git dir, normalized once as
  // join does for the checks above, plain concatenation is the join.
  const prefix = join(gitDir, '/');
  for (const ref of refs) {
    const text = readLooseRef(prefix + ref);
    if (text === NOT_LOOSE) {
      notLoose.push(ref);
      continue;
    }
    if (text === undefined || !OBJECT_ID.test(text)) return undefined; // a symbolic ref, a half-written file, an I/O error
    values.set(ref, text);
  }
  if (notLoose.length === 0) return values;
  let packed: string;
  try {
    packed = readFileSync(join(gitDir, 'packed-refs'), 'utf8');
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
