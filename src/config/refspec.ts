import type { Refspec } from './types.js';

/** Used when a remote configures no `push`: every ref under its own name. */
export function defaultPushRefspec(force: boolean): Refspec {
  const text = `${force ? '+' : ''}refs/*:refs/*`;
  return { force, src: 'refs/*', dst: 'refs/*', text };
}

/**
 * Parses a push refspec `[+]src[:dst]` (a missing `:dst` means the same name,
 * as in git push). Returns the refspec, or the error message.
 */
export function parseRefspec(text: string): Refspec | string {
  const trimmed = text.trim();
  const force = trimmed.startsWith('+');
  const body = force ? trimmed.slice(1) : trimmed;
  if (body === '') return `invalid refspec "${text}": empty`;
  if (body.startsWith('^')) {
    return `invalid refspec "${text}": negative refspecs are not supported; use excludedRefsPattern`;
  }
  const colons = body.split(':').length - 1;
  if (colons > 1) return `invalid refspec "${text}": more than one ":"`;
  const [src = '', dst = src] = body.split(':');
  if (src === '') return `invalid refspec "${text}": empty source (deleting refs by refspec is not supported)`;
  if (dst === '') return `invalid refspec "${text}": empty destination`;
  for (const [side, ref] of [
    ['source', src],
    ['destination', dst],
  ] as const) {
    const reason = refPatternProblem(ref);
    if (reason) return `invalid refspec "${text}": ${side} ${reason}`;
  }
  if (hasWildcard(src) !== hasWildcard(dst)) {
    return `invalid refspec "${text}": source and destination must both have one "*" or neither`;
  }
  return { force, src, dst, text: trimmed };
}

/**
 * git's ref-name rules (check-ref-format) for one side of a refspec, allowing
 * a single `*`. Both sides must live under `refs/`: a push to a short name
 * would be resolved by the destination, which is not reproducible.
 */
function refPatternProblem(ref: string): string | undefined {
  if (!ref.startsWith('refs/')) return `"${ref}" must start with refs/`;
  if ((ref.match(/\*/g) ?? []).length > 1) return `"${ref}" has more than one "*"`;
  if (ref.includes('..')) return `"${ref}" contains ".."`;
  if (ref.includes('//') || ref.endsWith('/')) return `"${ref}" has an empty path component`;
  if (ref.includes('@{')) return `"${ref}" contains "@{"`;
  if (/[\x00-\x20\x7f~^:?[\\]/.test(ref)) return `"${ref}" contains a character git forbids in ref names`;
  if (ref.endsWith('.') || ref.split('/').some((c) => c.startsWith('.') || c.endsWith('.lock'))) {
    return `"${ref}" has a component that starts with "." or ends with ".lock" or "."`;
  }
  return undefined;
}

function hasWildcard(pattern: string): boolean {
  return pattern.includes('*');
}

/** What a ref becomes on the destination, under the first refspec whose source matches it. */
export interface MappedRef {
  readonly dst: string;
  readonly force: boolean;
}

/**
 * Maps a local ref through the remote's push refspecs. The first matching
 * refspec wins (simpler to predict than git's "most specific" rule for fetch,
 * and config order is what the user reads). Undefined when none matches.
 */
export function mapRefThroughRefspecs(refspecs: readonly Refspec[], ref: string): MappedRef | undefined {
  for (const spec of refspecs) {
    const dst = mapRef(spec, ref);
    if (dst !== undefined) return { dst, force: spec.force };
  }
  return undefined;
}

/** The local ref a destination ref would come from (the refspecs read backwards), if any. */
export function unmapRef(refspecs: readonly Refspec[], dst: string): string | undefined {
  for (const spec of refspecs) {
    const src = mapRef({ ...spec, src: spec.dst, dst: spec.src }, dst);
    if (src !== undefined) return src;
  }
  return undefined;
}

/**
 * The destination name of `ref` under one refspec, or undefined when its source
 * does not match or the name it would get is not a valid ref name: a wildcard
 * can splice `a.` or `.b` or `x/` into a name (`refs/*a:refs/*` maps
 * `refs/a.a` to `refs/a.`), and git refuses the whole push over one bad name.
 */
export function mapRef(spec: Refspec, ref: string): string | undefined {
  const star = spec.src.indexOf('*');
  if (star < 0) return ref === spec.src ? spec.dst : undefined;
  const prefix = spec.src.slice(0, star);
  const suffix = spec.src.slice(star + 1);
  if (ref.length <= prefix.length + suffix.length) return undefined;
  if (!ref.startsWith(prefix) || !ref.endsWith(suffix)) return undefined;
  const matched = ref.slice(prefix.length, ref.length - suffix.length);
  // Slicing, not String.replace: a ref may contain `$&`-like replacement patterns.
  const dstStar = spec.dst.indexOf('*');
  const dst = spec.dst.slice(0, dstStar) + matched + spec.dst.slice(dstStar + 1);
  return dst.includes('*') || refPatternProblem(dst) !== undefined ? undefined : dst;
}
