import { describe, expect, it } from 'vitest';
import { parseRefspec } from '../../../src/config/refspec.js';
import { compileJavaRegex, isJavaRegexProblem } from '../../../src/config/java-regex.js';
import type { JavaRegex, Refspec } from '../../../src/config/types.js';
import { DROPPED_NOT_DELETED, planPush, type PlanInput } from '../../../src/push/push-plan.js';
import { FULL_SYNC_REF } from '../../../src/task/task.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

function specs(...texts: string[]): Refspec[] {
  return texts.map((text) => {
    const spec = parseRefspec(text);
    if (typeof spec === 'string') throw new Error(spec);
    return spec;
  });
}

function javaRegex(text: string): JavaRegex {
  const regex = compileJavaRegex(text);
  if (isJavaRegexProblem(regex)) throw new Error(regex.message);
  return regex;
}

interface RemoteOptions {
  mirror?: boolean;
  excluded?: JavaRegex[];
  replicatePermissions?: boolean;
  replicateNoteDbMetaRefs?: boolean;
}

function remote(push: string[], options: RemoteOptions = {}): PlanInput['remote'] {
  return {
    push: specs(...push),
    mirror: options.mirror ?? false,
    excludedRefsPatterns: options.excluded ?? [],
    replicatePermissions: options.replicatePermissions ?? true,
    replicateNoteDbMetaRefs: options.replicateNoteDbMetaRefs ?? true,
  };
}

const refs = (entries: Record<string, string>): Map<string, string> => new Map(Object.entries(entries));

describe('planPush for claimed refs', () => {
  it('pushes the object id resolved now, forced only where the refspec forces', () => {
    const plan = planPush({
      remote: remote(['refs/heads/*:refs/heads/*', '+refs/changes/*:refs/changes/*']),
      localRefs: refs({ 'refs/heads/main': A, 'refs/changes/01/1/1': B, 'refs/heads/other': C }),
      claimedRefs: ['refs/heads/main', 'refs/changes/01/1/1'],
    });
    expect(plan.pushes).toEqual([
      { ref: 'refs/changes/01/1/1', dst: 'refs/changes/01/1/1', refspec: `+${B}:refs/changes/01/1/1`, action: 'update' },
      { ref: 'refs/heads/main', dst: 'refs/heads/main', refspec: `${A}:refs/heads/main`, action: 'update' },
    ]);
    expect(plan.settled).toEqual([]);
  });

  it('maps through the first refspec whose source matches, renaming the ref', () => {
    const plan = planPush({
      remote: remote(['refs/heads/release/*:refs/heads/stable/*', '+refs/heads/*:refs/heads/all/*']),
      localRefs: refs({ 'refs/heads/release/1.0': A }),
      claimedRefs: ['refs/heads/release/1.0'],
    });
    expect(plan.pushes.map((p) => p.refspec)).toEqual([`${A}:refs/heads/stable/1.0`]);
  });

  it('deletes a ref gone locally when its refspec forces', () => {
    const plan = planPush({ remote: remote(['+refs/heads/*:refs/heads/*']), localRefs: refs({}), claimedRefs: ['refs/heads/gone'] });
    expect(plan.pushes).toEqual([{ ref: 'refs/heads/gone', dst: 'refs/heads/gone', refspec: ':refs/heads/gone', action: 'delete' }]);
  });

  it('deletes a ref gone locally when the remote mirrors, even without force', () => {
    const plan = planPush({ remote: remote(['refs/heads/*:refs/heads/*'], { mirror: true }), localRefs: refs({}), claimedRefs: ['refs/heads/gone'] });
    expect(plan.pushes.map((p) => p.refspec)).toEqual([':refs/heads/gone']);
  });

  it('drops a ref gone locally, with the reason, when neither force nor mirror allow a delete', () => {
    const plan = planPush({
      remote: remote(['refs/heads/*:refs/heads/*']),
      localRefs: refs({ 'refs/heads/main': A }),
      claimedRefs: ['refs/heads/gone', 'refs/heads/main'],
    });
    expect(plan.settled).toEqual([{ ref: 'refs/heads/gone', dst: 'refs/heads/gone', status: 'dropped', detail: DROPPED_NOT_DELETED }]);
    expect(DROPPED_NOT_DELETED).toBe('deleted locally; not deleted on the destination (refspec not forced and mirror off)');
    expect(plan.pushes.map((p) => p.ref)).toEqual(['refs/heads/main']);
  });

  it('skips excluded refs and refs no refspec covers, without reporting them as outcomes', () => {
    const plan = planPush({
      remote: remote(['+refs/*:refs/*'], { excluded: [javaRegex('refs/heads/secret/.*')] }),
      localRefs: refs({ 'refs/heads/secret/x': A, 'refs/heads/main': B }),
      claimedRefs: ['refs/heads/secret/x', 'HEAD', 'refs/heads/main'],
    });
    expect(plan.pushes.map((p) => p.ref)).toEqual(['refs/heads/main']);
    expect(plan.settled).toEqual([]);
    expect(plan.skipped).toEqual([
      { ref: 'HEAD', reason: 'matches no push refspec' },
      { ref: 'refs/heads/secret/x', reason: 'matches excludedRefsPattern' },
    ]);
  });

  it('keeps the first of two refs that map to one destination and drops the other', () => {
    const plan = planPush({
      remote: remote(['refs/heads/*:refs/x/*', 'refs/tags/*:refs/x/*']),
      localRefs: refs({ 'refs/heads/v1': A, 'refs/tags/v1': B }),
      claimedRefs: ['refs/tags/v1', 'refs/heads/v1'],
    });
    expect(plan.pushes).toHaveLength(1);
    expect(plan.settled).toEqual([expect.objectContaining({ status: 'dropped', dst: 'refs/x/v1' })]);
  });

  it('does not send refs the destination already has, when its refs are known', () => {
    const plan = planPush({
      remote: remote(['+refs/heads/*:refs/heads/*']),
      localRefs: refs({ 'refs/heads/same': A, 'refs/heads/moved': B }),
      claimedRefs: ['refs/heads/same', 'refs/heads/moved', 'refs/heads/gone'],
      remoteRefs: refs({ 'refs/heads/same': A, 'refs/heads/moved': A }),
    });
    expect(plan.pushes.map((p) => p.refspec)).toEqual([`+${B}:refs/heads/moved`]);
    expect(plan.settled).toEqual([
      { ref: 'refs/heads/gone', dst: 'refs/heads/gone', status: 'up-to-date', detail: 'already absent on the destination' },
      { ref: 'refs/heads/same', dst: 'refs/heads/same', status: 'up-to-date' },
    ]);
  });
});

describe('planPush for a full sync', () => {
  const local = refs({ HEAD: A, 'refs/heads/main': A, 'refs/heads/dev': B, 'refs/tags/v1': C, 'refs/meta/config': C, 'refs/heads/wip/x': B });
  const excluded = [javaRegex('refs/heads/wip/.*')];

  it('pushes every local ref the refspecs cover, never HEAD, never excluded refs', () => {
    const plan = planPush({
      remote: remote(['refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'], { excluded }),
      localRefs: local,
      claimedRefs: [FULL_SYNC_REF],
    });
    expect(plan.pushes.map((p) => p.refspec)).toEqual([`${B}:refs/heads/dev`, `${A}:refs/heads/main`, `${C}:refs/tags/v1`]);
    expect(plan.skipped).toEqual([{ ref: 'refs/heads/wip/x', reason: 'matches excludedRefsPattern' }]);
  });

  it('with mirror, deletes destination refs inside the refspec namespaces that have no local source', () => {
    const plan = planPush({
      remote: remote(['+refs/heads/*:refs/heads/*'], { mirror: true, excluded }),
      localRefs: local,
      claimedRefs: [FULL_SYNC_REF],
      remoteRefs: refs({
        HEAD: A,
        'refs/heads/main': A, // equal: not sent
        'refs/heads/stale': A, // orphan: deleted
        'refs/heads/wip/y': A, // orphan, but its local name is excluded: kept
        'refs/tags/v0': A, // outside the namespace: kept
        'refs/tags/v0^{}': A,
      }),
    });
    expect(plan.pushes).toEqual([
      { ref: 'refs/heads/dev', dst: 'refs/heads/dev', refspec: `+${B}:refs/heads/dev`, action: 'update' },
      { ref: 'refs/heads/stale', dst: 'refs/heads/stale', refspec: ':refs/heads/stale', action: 'delete' },
    ]);
    expect(plan.settled).toEqual([{ ref: 'refs/heads/main', dst: 'refs/heads/main', status: 'up-to-date' }]);
  });

  it('maps destination names back through renaming refspecs to find orphans', () => {
    const plan = planPush({
      remote: remote(['refs/heads/*:refs/backup/*'], { mirror: true }),
      localRefs: refs({ 'refs/heads/main': A }),
      claimedRefs: [FULL_SYNC_REF],
      remoteRefs: refs({ 'refs/backup/main': A, 'refs/backup/old': B, 'refs/heads/old': B }),
    });
    expect(plan.pushes).toEqual([{ ref: 'refs/heads/old', dst: 'refs/backup/old', refspec: ':refs/backup/old', action: 'delete' }]);
  });

  it('without mirror, deletes nothing on the destination', () => {
    const plan = planPush({
      remote: remote(['refs/heads/*:refs/heads/*']),
      localRefs: local,
      claimedRefs: [FULL_SYNC_REF],
      remoteRefs: refs({ 'refs/heads/stale': A }),
    });
    expect(plan.pushes.every((p) => p.action === 'update')).toBe(true);
  });

  it('still deletes a claimed ref gone locally when a full sync is merged with it', () => {
    const plan = planPush({
      remote: remote(['+refs/heads/*:refs/heads/*']),
      localRefs: refs({ 'refs/heads/main': A }),
      claimedRefs: ['refs/heads/gone', FULL_SYNC_REF, 'refs/heads/main'],
    });
    expect(plan.pushes.map((p) => p.refspec)).toEqual([':refs/heads/gone', `+${A}:refs/heads/main`]);
    expect(plan.settled).toEqual([]);
  });
});

describe('planPush honours replicatePermissions, replicateNoteDbMetaRefs and the automerge cache', () => {
  const gerritRefs = refs({
    'refs/heads/main': A,
    'refs/meta/config': B,
    'refs/changes/01/1/1': C,
    'refs/changes/01/1/meta': B,
    'refs/users/01/1000001': C,
    'refs/sequences/changes': C,
    'refs/cache-automerge/ab/cdef': A,
  });
  const gerritRemote = (options: RemoteOptions = {}): PlanInput['remote'] => remote(['+refs/*:refs/*'], options);

  it('a full sync with both off pushes what Gerrit pushes: no refs/meta/config, no change meta ref, never the automerge cache', () => {
    const plan = planPush({
      remote: gerritRemote({ replicatePermissions: false, replicateNoteDbMetaRefs: false }),
      localRefs: gerritRefs,
      claimedRefs: [FULL_SYNC_REF],
    });
    expect(plan.pushes.map((p) => p.dst)).toEqual(['refs/changes/01/1/1', 'refs/heads/main', 'refs/sequences/changes', 'refs/users/01/1000001']);
    expect(plan.skipped).toEqual([
      { ref: 'refs/cache-automerge/ab/cdef', reason: 'refs/cache-automerge/* is never replicated' },
      { ref: 'refs/changes/01/1/meta', reason: 'a NoteDb meta ref with replicateNoteDbMetaRefs = false' },
      { ref: 'refs/meta/config', reason: 'refs/meta/config with replicatePermissions = false' },
    ]);
  });

  it('a full sync with the defaults pushes everything but the automerge cache', () => {
    const plan = planPush({ remote: gerritRemote(), localRefs: gerritRefs, claimedRefs: [FULL_SYNC_REF] });
    expect(plan.pushes.map((p) => p.dst)).toEqual([...gerritRefs.keys()].filter((ref) => !ref.startsWith('refs/cache-automerge/')).sort());
  });

  it('claimed refs go through the same rule', () => {
    const plan = planPush({
      remote: gerritRemote({ replicatePermissions: false }),
      localRefs: gerritRefs,
      claimedRefs: ['refs/meta/config', 'refs/changes/01/1/meta', 'refs/cache-automerge/ab/cdef'],
    });
    expect(plan.pushes.map((p) => p.dst)).toEqual(['refs/changes/01/1/meta']);
    expect(plan.skipped.map((s) => s.ref)).toEqual(['refs/cache-automerge/ab/cdef', 'refs/meta/config']);
  });

  it('a mirror never deletes at the destination what it would not push: refs of the rule, with or without a local source', () => {
    const plan = planPush({
      remote: gerritRemote({ mirror: true, replicatePermissions: false, replicateNoteDbMetaRefs: false }),
      localRefs: refs({ 'refs/heads/main': A }),
      claimedRefs: [FULL_SYNC_REF, 'refs/changes/02/2/meta'],
      remoteRefs: refs({
        'refs/heads/main': A,
        'refs/heads/stale': A, // an orphan like any other: deleted
        'refs/meta/config': B, // the destination's own access rights: kept
        'refs/changes/01/1/meta': B,
        'refs/changes/02/2/meta': B, // deleted locally and claimed: still not ours to delete
        'refs/draft-comments/01/1/1000001': B,
        'refs/cache-automerge/ab/cdef': B,
      }),
    });
    expect(plan.pushes).toEqual([{ ref: 'refs/heads/stale', dst: 'refs/heads/stale', refspec: ':refs/heads/stale', action: 'delete' }]);
  });

  it('a locally deleted ref the rule keeps back is not deleted on a forced refspec either', () => {
    const plan = planPush({ remote: gerritRemote({ replicatePermissions: false }), localRefs: refs({}), claimedRefs: ['refs/meta/config', 'refs/heads/gone'] });
    expect(plan.pushes.map((p) => p.refspec)).toEqual([':refs/heads/gone']);
    expect(plan.skipped).toEqual([{ ref: 'refs/meta/config', reason: 'refs/meta/config with replicatePermissions = false' }]);
  });
});
