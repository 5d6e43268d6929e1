/**
 * `git push --porcelain` output, parsed without trusting anything else git
 * prints. One line per ref: `<flag>\t<src>:<dst>\t<summary>[ (<reason>)]`.
 */

/** ' ' fast-forward, '+' forced, '-' deleted, '*' new, '!' rejected, '=' up to date. */
export type PorcelainFlag = ' ' | '+' | '-' | '*' | '!' | '=';

export interface PorcelainRef {
  readonly flag: PorcelainFlag;
  /** What was pushed: a ref name, an object id, or '' for a delete. */
  readonly src: string;
  readonly dst: string;
  /** `[new branch]`, `abc123..def456`, `[rejected]`, `[remote rejected]`… */
  readonly summary: string;
  /** The text in parentheses after the summary: `non-fast-forward`, `pre-receive hook declined`, `forced update`… */
  readonly reason?: string;
}

// Summary is either a bracketed phrase (may hold spaces) or one word (an oid range);
// the reason is everything inside the trailing parentheses, which may nest.
const REF_LINE = /^([ +\-*!=])\t([^\t:]*):([^\t]+)\t(\[[^\]]*\]|\S+)(?: \((.*)\))?$/;

export function parsePushPorcelain(stdout: string): PorcelainRef[] {
  const refs: PorcelainRef[] = [];
  for (const raw of stdout.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const match = REF_LINE.exec(line);
    if (match === null) continue; // `To <url>`, `Done`, anything else git adds
    const [, flag, src = '', dst = '', summary = '', reason] = match;
    refs.push({ flag: flag as PorcelainFlag, src, dst, summary, ...(reason === undefined ? {} : { reason }) });
  }
  return refs;
}

/**
 * True when git got as far as reporting per-ref results. Without `Done` the
 * push failed as a whole (connection, missing repository, bad refspec) and
 * stderr says why.
 */
export function porcelainCompleted(stdout: string): boolean {
  return /^Done\r?$/m.test(stdout);
}

/**
 * A remote that could not lock or write a ref, or could not unpack what we
 * sent, is busy or unwell rather than saying no: worth retrying, not parking.
 * "unable to migrate objects" is receive-pack finding the repository gone under
 * it (deleted mid-push): the retry finds it missing, and may create it again.
 */
export function isTransientRejection(ref: PorcelainRef): boolean {
  return ref.flag === '!' && /failed to (lock|update ref)|cannot lock ref|unpacker error|unable to migrate objects/i.test(ref.reason ?? '');
}

/**
 * receive-pack runs `pre-receive` once for the whole push and, when it exits non-zero, reports
 * this same reason for every ref it was sent: the answer is about the push, not about each ref.
 * (The `update` hook answers per ref, as `hook declined`.)
 */
export function isWholePushDecline(ref: PorcelainRef): boolean {
  return ref.flag === '!' && ref.summary === '[remote rejected]' && ref.reason === 'pre-receive hook declined';
}
