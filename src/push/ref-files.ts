import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { errnoName } from '../runtime/errno.js';

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** Longer than any loose ref file holding an object id ("<64 hex digits>\n"). */
const MAX_LOOSE_REF_BYTES = 128;

/** Ref names that are safe to use as paths under the git dir (no escape, nothing odd). */
function plainRefName(ref: string): boolean {
  return (
    /^refs\/[A-Za-z0-9._\-/+@]+$/.test(ref) &&
    !ref.includes('..') &&
    !ref.includes('//') &&
    !ref.endsWith('/') &&
    !ref.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'))
  );
}

const NOT_LOOSE = Symbol('not a loose ref');

/**
 * A loose ref file's trimmed text. NOT_LOOSE when there is no such file (or a folder there);
 * undefined for anything else (an I/O error, a file too long to be an object id).
 */
function readLooseRef(path: string): string | typeof NOT_LOOSE | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = errnoName(error);
    return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' ? NOT_LOOSE : undefined;
  }
  if (bytes.length >= MAX_LOOSE_REF_BYTES) return undefined;
  // Only the whitespace git itself allows after the id: latin1 would turn a stray 0xA0 into a
  // space that trim() removes.
  return bytes.toString('latin1').replace(/[ \t\r\n]+$/, '');
}

/** Whether `path` exists; undefined when that cannot be told (any error but ENOENT). */
function present(path: string): boolean | undefined {
  try {
    statSync(path);
    return true;
  } catch (error) {
    return errnoName(error) === 'ENOENT' ? false : undefined;
  }
}

/** A bare repository with the files ref backend: HEAD and refs/ there, no reftable, not a worktree. */
function filesBackend(gitDir: string): boolean {
  try {
    if (!statSync(join(gitDir, 'HEAD')).isFile() || !statSync(join(gitDir, 'refs')).isDirectory()) return false;
  } catch {
    return false;
  }
  for (const marker of ['reftable', 'commondir']) {
    if (present(join(gitDir, marker)) !== false) return false;
  }
  return true;
}

/**
 * The current values of a few refs, read straight from a bare repository's files-backend ref
 * store (loose ref files, then packed-refs) instead of spawning `git for-each-ref`: a push of a
 * handful of refs otherwise pays a second process start. Loose refs are read before packed-refs,
 * the order in which `git pack-refs` and ref deletion keep a ref visible. Returns undefined when
 * the answer would not be certain — reftable or worktree repositories, symbolic refs, anything
 * unexpected — and the caller asks git instead.
 *
 * The reads are synchronous: the files are the master's own, on its local disk, one line each.
 * Through the thread pool each would cost four round trips (open, fstat, read, close), each a
 * wake-up of the event loop on CPUs that concurrent git pushes keep busy.
 */
export function readRefsFromFiles(gitDir: string, refs: readonly string[]): Map<string, string> | undefined {
  if (!refs.every(plainRefName) || !filesBackend(gitDir)) return undefined;
  const loose = refs.map((ref) => readLooseRef(join(gitDir, ref)));
  const values = new Map<string, string>();
  const notLoose = new Set<string>();
  for (const [i, ref] of refs.entries()) {
    const text = loose[i];
    if (text === NOT_LOOSE) notLoose.add(ref);
    else if (text === undefined || !OBJECT_ID.test(text))
      return undefined; // a symbolic ref, a half-written file, an I/O error
    else values.set(ref, text);
  }
  if (notLoose.size === 0) return values;
  let packed: string;
  try {
    packed = readFileSync(join(gitDir, 'packed-refs'), 'utf8');
  } catch (error) {
    if (errnoName(error) === 'ENOENT') return values;
    return undefined;
  }
  for (const line of packed.split('\n')) {
    if (line === '' || line.startsWith('#') || line.startsWith('^')) continue;
    const space = line.indexOf(' ');
    const ref = line.slice(space + 1);
    if (notLoose.has(ref)) {
      const oid = line.slice(0, space);
      if (!OBJECT_ID.test(oid)) return undefined;
      values.set(ref, oid);
    }
  }
  return values;
}
