import { describe, expect, it } from 'vitest';
import { judgeOrphanPush, type OrphanPushFacts } from '../../../src/daemon/orphan-push-proof.js';

const BOOT = '720ae816-d705-4e9f-8c69-e786ecd42689';

/** The orphaned git push of a node that died on this machine, still running: everything matches. */
const orphan: OrphanPushFacts = {
  pid: 4242,
  recordedStartTime: 25756,
  recordedBootId: BOOT,
  ownPid: 1000,
  ownGroup: 990,
  ownUid: 1001,
  bootId: BOOT,
  running: { startTime: 25756, argv0: 'git', group: 4242, uid: 1001 },
};
const running = orphan.running!;

describe('judgeOrphanPush: may the recorded push process group be signalled?', () => {
  it('yes for a running git whose start time and boot match the record (argv0 as a bare name or a path)', () => {
    expect(judgeOrphanPush(orphan)).toBe('orphaned-push');
    expect(judgeOrphanPush({ ...orphan, running: { ...running, argv0: '/usr/bin/git' } })).toBe('orphaned-push');
  });

  it("never for pid 0 (this node's own group), 1 (every process), negative or non-integer pids, even when all else matches", () => {
    for (const pid of [0, 1, -1, -4242, 4242.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      expect(judgeOrphanPush({ ...orphan, pid })).toBe('invalid-pid');
    }
  });

  it("never for this node's own pid or its own process group", () => {
    expect(judgeOrphanPush({ ...orphan, pid: orphan.ownPid })).toBe('own-process');
    expect(judgeOrphanPush({ ...orphan, pid: 990 })).toBe('own-process');
  });

  it('nothing to do when no process runs with that pid', () => {
    expect(judgeOrphanPush({ ...orphan, running: undefined })).toBe('gone');
  });

  it('never for a record of the earlier version, which names a pid without start time or boot id', () => {
    expect(judgeOrphanPush({ ...orphan, recordedStartTime: undefined, recordedBootId: undefined })).toBe('unrecorded');
    expect(judgeOrphanPush({ ...orphan, recordedStartTime: undefined })).toBe('unrecorded');
    expect(judgeOrphanPush({ ...orphan, recordedBootId: undefined })).toBe('unrecorded');
  });

  it("never for a record from another boot, or when this machine's boot id is unknown", () => {
    expect(judgeOrphanPush({ ...orphan, recordedBootId: 'b2f1c0de-0000-4000-8000-000000000000' })).toBe('other-boot');
    expect(judgeOrphanPush({ ...orphan, bootId: undefined })).toBe('other-boot');
  });

  it('never for a process started at another time (the pid reused), or whose start time cannot be read', () => {
    expect(judgeOrphanPush({ ...orphan, running: { ...running, startTime: 25757 } })).toBe('other-start-time');
    expect(judgeOrphanPush({ ...orphan, running: { ...running, startTime: undefined } })).toBe('other-start-time');
  });

  it('never for a process that is not git, or whose command line cannot be read', () => {
    for (const argv0 of ['sleep', '/bin/sh', 'gitk', '/usr/bin/git-wrapper', '/opt/git/bin/legit', '', undefined]) {
      expect(judgeOrphanPush({ ...orphan, running: { ...running, argv0 } })).toBe('not-git');
    }
  });

  it('never for a git that is not the leader of its own process group, or that runs as another user (start time and boot id can be copied by anyone)', () => {
    expect(judgeOrphanPush({ ...orphan, running: { ...running, group: 990 } })).toBe('not-group-leader');
    expect(judgeOrphanPush({ ...orphan, running: { ...running, group: undefined } })).toBe('not-group-leader');
    expect(judgeOrphanPush({ ...orphan, running: { ...running, uid: 0 } })).toBe('other-user');
    expect(judgeOrphanPush({ ...orphan, ownUid: undefined })).toBe('other-user');
  });
});
