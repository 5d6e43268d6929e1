import { describe, expect, it } from 'vitest';
import { judgeOrphanPush, type OrphanPushFacts, type ParentProcess } from '../../../src/daemon/orphan-push-proof.js';

const BOOT = '720ae816-d705-4e9f-8c69-e786ecd42689';

/** A parent as /proc shows it, sleeping (`S`) unless told otherwise. */
const parentOf = (pid: number, argv: string[] | undefined, state = 'S'): ParentProcess => ({ pid, argv, state });
/** What /proc shows as the parent of a push whose node died: init took it over. */
const INIT = parentOf(1, ['/sbin/init', 'splash']);

/** The orphaned git push of a node that died on this machine, still running: everything matches. */
const orphan: OrphanPushFacts = {
  pid: 4242,
  recordedStartTime: 25756,
  recordedBootId: BOOT,
  ownPid: 1000,
  ownGroup: 990,
  ownUid: 1001,
  ownRuntime: 'node',
  startedByThisNode: false,
  bootId: BOOT,
  running: { startTime: 25756, argv0: 'git', group: 4242, uid: 1001, parent: INIT },
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

  it('yes once the push was handed to a reaper when its node died: init, or a subreaper such as systemd --user or a container init', () => {
    for (const parent of [
      INIT,
      parentOf(1, ['/process_api', '--firecracker-init']),
      parentOf(1830, ['/usr/lib/systemd/systemd', '--user']),
      parentOf(1, ['/sbin/tini', '--', 'sh']),
    ]) {
      expect(judgeOrphanPush({ ...orphan, running: { ...running, parent } })).toBe('orphaned-push');
    }
  });

  it('never for a push whose parent is still a node: this node, a node on its runtime, or any process naming refrelay (everything else in a record can be copied from a live push)', () => {
    for (const parent of [
      parentOf(orphan.ownPid, ['/usr/bin/git']),
      parentOf(3100, ['node', '/opt/refrelay/bin/refrelay.js', 'daemon', '--config', '/etc/replication.config']),
      parentOf(3100, ['/usr/local/bin/node', '--enable-source-maps', '/srv/app/dist/bundle/main.js', 'daemon']),
      parentOf(3100, ['/home/ops/.nvm/versions/node/v20.11.0/bin/node', 'replicate.mjs']),
      parentOf(3100, ['/opt/bin/nodejs20', '/usr/lib/node_modules/refrelay/bin/refrelay.js', 'daemon']),
      parentOf(3100, ['/usr/local/bin/RefRelay', 'daemon']),
    ]) {
      expect(judgeOrphanPush({ ...orphan, running: { ...running, parent } })).toBe('parent-may-be-node');
    }
    expect(
      judgeOrphanPush({ ...orphan, ownRuntime: 'nodejs20', running: { ...running, parent: parentOf(3100, ['/opt/bin/nodejs20', 'replicate.mjs']) } }),
    ).toBe('parent-may-be-node');
  });

  it('never when the parent cannot be read: unknown, outside this pid namespace (0), or its command line unreadable or empty', () => {
    for (const parent of [undefined, parentOf(0, ['/sbin/init']), parentOf(1, undefined), parentOf(1, [])]) {
      expect(judgeOrphanPush({ ...orphan, running: { ...running, parent } })).toBe('parent-unknown');
    }
  });

  it('never for a push this node runs right now, whatever its parent reads as', () => {
    expect(judgeOrphanPush({ ...orphan, startedByThisNode: true })).toBe('own-push');
    expect(judgeOrphanPush({ ...orphan, startedByThisNode: true, running: undefined })).toBe('own-push');
  });

  it("yes when the parent is a node that is stopped (SIGSTOP, a debugger's stop): it no longer beats, and its push is the takeover's to end", () => {
    const node = ['node', '/opt/refrelay/bin/refrelay.js', 'daemon'];
    for (const state of ['T', 't']) expect(judgeOrphanPush({ ...orphan, running: { ...running, parent: parentOf(3100, node, state) } })).toBe('orphaned-push');
    for (const state of ['S', 'R', 'D', undefined]) {
      expect(judgeOrphanPush({ ...orphan, running: { ...running, parent: { pid: 3100, argv: node, state } } })).toBe('parent-may-be-node');
    }
    // Never this node, whatever state it reads as.
    expect(judgeOrphanPush({ ...orphan, running: { ...running, parent: parentOf(orphan.ownPid, node, 'T') } })).toBe('parent-may-be-node');
  });
});
