import type { Refspec, RemoteConfig } from './types.js';

/**
 * Whether a ref deleted locally is deleted on the destination: the refspec that maps it (the
 * first whose source matches) is forced, or the remote is `mirror`. Refs the remote keeps back
 * (`ref-exclusion.ts`) never get this far. Gerrit deletes only with `mirror` (README,
 * "Differences from the Gerrit plugin").
 */
export function pushesLocalDelete(remote: Pick<RemoteConfig, 'mirror'>, refspec: Pick<Refspec, 'force'>): boolean {
  return refspec.force || remote.mirror;
}

/** The `deletes:` line of `config check`: when this remote deletes destination refs, in the words of the README. */
export function describeDeletes(remote: Pick<RemoteConfig, 'mirror' | 'push'>): string {
  if (remote.mirror) return 'pushed (mirror); a full sync also deletes destination refs that no local ref maps to';
  const forced = remote.push.filter((spec) => spec.force).map((spec) => spec.text);
  const plain = remote.push.filter((spec) => !spec.force).map((spec) => spec.text);
  const s = forced.length > 1 ? 's' : '';
  if (plain.length === 0) return `pushed (forced refspec${s} ${forced.join(', ')})`;
  if (forced.length === 0) return 'not pushed (no forced refspec, mirror off)';
  return `pushed for refs a forced refspec maps (${forced.join(', ')}); not for ${plain.join(', ')} (not forced, mirror off)`;
}
