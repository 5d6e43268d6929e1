import { describe, expect, it } from 'vitest';
import { EXCLUDED_BY_PATTERN, isNoteDbMetaRef, projectExclusion, refExclusion, type RefExclusionRules } from '../../../src/config/ref-exclusion.js';
import { compileJavaRegex, isJavaRegexProblem } from '../../../src/config/java-regex.js';

const DEFAULTS: RefExclusionRules = { replicatePermissions: true, replicateNoteDbMetaRefs: true, excludedRefsPatterns: [] };
const NO_PERMISSIONS: RefExclusionRules = { ...DEFAULTS, replicatePermissions: false };
const NO_NOTEDB: RefExclusionRules = { ...DEFAULTS, replicateNoteDbMetaRefs: false };
const NEITHER: RefExclusionRules = { ...DEFAULTS, replicatePermissions: false, replicateNoteDbMetaRefs: false };

const push = 'push';
const skip = 'skip';
type Verdict = typeof push | typeof skip;

/**
 * What Gerrit's PushOne.canPushRef answers for each ref (true = push), with the defaults, with
 * replicatePermissions = false, with replicateNoteDbMetaRefs = false, and with both false.
 */
const GERRIT: Array<[ref: string, defaults: Verdict, noPermissions: Verdict, noNoteDb: Verdict, neither: Verdict]> = [
  ['refs/heads/main', push, push, push, push],
  ['refs/tags/v1.0', push, push, push, push],
  ['refs/meta/config', push, skip, push, skip],
  ['refs/meta/configx', push, push, push, push], // REFS_CONFIG.equals(ref): the exact name only
  ['refs/heads/refs/meta/config', push, push, push, push],
  ['refs/meta/dashboards/main', push, push, push, push],
  ['refs/meta/version', push, push, push, push],
  ['refs/changes/01/1/1', push, push, push, push], // a patch set: code, not NoteDb metadata
  ['refs/changes/01/1/meta', push, push, skip, skip],
  ['refs/changes/01/1/robot-comments', push, push, skip, skip],
  ['refs/changes/meta', push, push, skip, skip], // Java's endsWith("/meta") sees "changes/meta"
  ['refs/changes/01/1/metadata', push, push, push, push],
  ['refs/heads/feature/meta', push, push, push, push], // /meta outside refs/changes/
  ['refs/draft-comments/01/1/1000001', push, push, skip, skip],
  ['refs/starred-changes/01/1/1000001', push, push, skip, skip],
  ['refs/users/01/1000001', push, push, push, push], // not in RefNames.isNoteDbMetaRef
  ['refs/users/01/1000001/edit-1/1', push, push, push, push],
  ['refs/users/default', push, push, push, push],
  ['refs/sequences/changes', push, push, push, push],
  ['refs/meta/external-ids', push, push, push, push],
  ['refs/groups/ab/abcdef0123', push, push, push, push],
  ['refs/deleted-groups/ab/abcdef0123', push, push, push, push],
  ['refs/meta/group-names', push, push, push, push],
  ['refs/cache-automerge/ab/cdef0123456789abcdef0123456789abcdef01', skip, skip, skip, skip],
  ['refs/cache-automerge', push, push, push, push], // the prefix is "refs/cache-automerge/"
];

const verdict = (rules: RefExclusionRules, ref: string): Verdict => (refExclusion(rules, ref) === undefined ? push : skip);

describe("refExclusion answers as Gerrit's PushOne.canPushRef", () => {
  it.each(GERRIT)(
    '%s: defaults %s, replicatePermissions=false %s, replicateNoteDbMetaRefs=false %s, both %s',
    (ref, defaults, noPermissions, noNoteDb, neither) => {
      expect([verdict(DEFAULTS, ref), verdict(NO_PERMISSIONS, ref), verdict(NO_NOTEDB, ref), verdict(NEITHER, ref)]).toEqual([
        defaults,
        noPermissions,
        noNoteDb,
        neither,
      ]);
    },
  );

  it('names the setting that keeps a ref back', () => {
    expect(refExclusion(NO_PERMISSIONS, 'refs/meta/config')).toBe('refs/meta/config with replicatePermissions = false');
    expect(refExclusion(NO_NOTEDB, 'refs/changes/01/1/meta')).toBe('a NoteDb meta ref with replicateNoteDbMetaRefs = false');
    expect(refExclusion(DEFAULTS, 'refs/cache-automerge/ab/cd')).toBe('refs/cache-automerge/* is never replicated');
  });

  it('applies excludedRefsPattern to the whole name, like Java matches()', () => {
    const pattern = compileJavaRegex('refs/heads/wip/.*');
    if (isJavaRegexProblem(pattern)) throw new Error(pattern.message);
    const rules = { ...DEFAULTS, excludedRefsPatterns: [pattern] };
    expect(refExclusion(rules, 'refs/heads/wip/a')).toBe(EXCLUDED_BY_PATTERN);
    expect(refExclusion(rules, 'refs/heads/wipe')).toBeUndefined();
    expect(refExclusion(rules, 'x/refs/heads/wip/a')).toBeUndefined();
  });
});

describe('isNoteDbMetaRef', () => {
  it("is exactly Gerrit core's RefNames.isNoteDbMetaRef", () => {
    const meta = GERRIT.filter(([, , , noNoteDb]) => noNoteDb === skip)
      .map(([ref]) => ref)
      .filter((ref) => !ref.startsWith('refs/cache-automerge/'));
    expect(meta).toEqual([
      'refs/changes/01/1/meta',
      'refs/changes/01/1/robot-comments',
      'refs/changes/meta',
      'refs/draft-comments/01/1/1000001',
      'refs/starred-changes/01/1/1000001',
    ]);
    expect(meta.every(isNoteDbMetaRef)).toBe(true);
    expect(
      GERRIT.map(([ref]) => ref)
        .filter((ref) => !meta.includes(ref))
        .some(isNoteDbMetaRef),
    ).toBe(false);
  });
});

describe("projectExclusion answers as Gerrit's Destination.schedule for permissions-only projects", () => {
  it('keeps back every update of a project whose HEAD points at refs/meta/config, only with replicatePermissions = false', () => {
    expect(projectExclusion(NO_PERMISSIONS, 'refs/meta/config')).toBe(
      'a permissions-only project (HEAD is refs/meta/config) with replicatePermissions = false',
    );
    expect(projectExclusion(DEFAULTS, 'refs/meta/config')).toBeUndefined();
    expect(projectExclusion(NO_PERMISSIONS, 'refs/heads/main')).toBeUndefined();
    expect(projectExclusion(NO_PERMISSIONS, undefined)).toBeUndefined(); // detached HEAD
  });
});
