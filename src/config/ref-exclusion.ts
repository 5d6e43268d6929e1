import type { RemoteConfig } from './types.js';

/** The settings of a remote that decide which local refs it never replicates. */
export type RefExclusionRules = Pick<RemoteConfig, 'replicatePermissions' | 'replicateNoteDbMetaRefs' | 'excludedRefsPatterns'>;

/** Gerrit's project configuration branch (`RefNames.REFS_CONFIG`): access rights live there. */
export const PERMISSIONS_REF = 'refs/meta/config';

/** Gerrit's cache of automatic merge results (`RefNames.REFS_CACHE_AUTOMERGE`), rebuilt on demand. */
const AUTOMERGE_PREFIX = 'refs/cache-automerge/';

export const EXCLUDED_BY_PATTERN = 'matches excludedRefsPattern';

/**
 * Why `remote` never replicates the local ref `ref`, or undefined when its refspecs alone decide.
 * This is Gerrit's `PushOne.canPushRef` (replication plugin, master), in its order:
 *
 *     !(noPerms && RefNames.REFS_CONFIG.equals(ref))
 *       && !ref.startsWith(RefNames.REFS_CACHE_AUTOMERGE)
 *       && !(!pool.replicateNoteDbMetaRefs() && RefNames.isNoteDbMetaRef(ref))
 *       && pool.excludedRefsPattern().stream().noneMatch(p -> p.matcher(ref).matches())
 *
 * It is asked of the local (source) name, before any refspec renames it, as Gerrit does. Every
 * path that turns refs into work asks it: planning tasks on enqueue, planning a push (claimed refs
 * and full syncs), and choosing which destination refs a mirror may delete.
 */
export function refExclusion(remote: RefExclusionRules, ref: string): string | undefined {
  if (!remote.replicatePermissions && ref === PERMISSIONS_REF) return `${PERMISSIONS_REF} with replicatePermissions = false`;
  if (ref.startsWith(AUTOMERGE_PREFIX)) return `${AUTOMERGE_PREFIX}* is never replicated`;
  if (!remote.replicateNoteDbMetaRefs && isNoteDbMetaRef(ref)) return 'a NoteDb meta ref with replicateNoteDbMetaRefs = false';
  // `search`, not `test`: it ignores `lastIndex`, so a /g pattern in the frozen config cannot misfire.
  if (remote.excludedRefsPatterns.some((pattern) => pattern.matches(ref))) return EXCLUDED_BY_PATTERN;
  return undefined;
}

/**
 * Why `remote` replicates nothing of a project whose HEAD points at `headTarget`, or undefined.
 * Gerrit's `Destination.schedule`: with replicatePermissions = false, a project whose HEAD is a
 * symbolic ref to refs/meta/config is a permissions-only project (All-Projects, and All-Users, whose
 * account refs and external ids go with it) and none of its updates is scheduled.
 */
export function projectExclusion(remote: Pick<RemoteConfig, 'replicatePermissions'>, headTarget: string | undefined): string | undefined {
  if (remote.replicatePermissions || headTarget !== PERMISSIONS_REF) return undefined;
  return `a permissions-only project (HEAD is ${PERMISSIONS_REF}) with replicatePermissions = false`;
}

/**
 * Gerrit core's `RefNames.isNoteDbMetaRef`, copied as it is:
 *
 *     if (ref.startsWith(REFS_CHANGES)
 *         && (ref.endsWith(META_SUFFIX) || ref.endsWith(ROBOT_COMMENTS_SUFFIX))) return true;
 *     if (ref.startsWith(REFS_DRAFT_COMMENTS) || ref.startsWith(REFS_STARRED_CHANGES)) return true;
 *     return false;
 *
 * Only change meta refs, robot comments, draft comments and stars: All-Users' account refs
 * (`refs/users/*`), `refs/meta/external-ids`, group refs and `refs/sequences/*` are NoteDb data too,
 * but Gerrit's rule keeps replicating them, so this one does as well (leave them out with push
 * refspecs or excludedRefsPattern). The suffix tests are plain string tests, as in Java, so
 * `refs/changes/meta` counts too.
 */
export function isNoteDbMetaRef(ref: string): boolean {
  if (ref.startsWith('refs/changes/') && (ref.endsWith('/meta') || ref.endsWith('/robot-comments'))) return true;
  return ref.startsWith('refs/draft-comments/') || ref.startsWith('refs/starred-changes/');
}
