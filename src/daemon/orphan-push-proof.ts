import { basename } from 'node:path';

/**
 * Everything known about the process a lock's owner record names as its running push. The
 * record comes from the shared store, which anyone with write access to it can forge, and pids
 * are reused: the record alone proves nothing.
 */
export interface OrphanPushFacts {
  /** `pushPid` from the owner record. */
  readonly pid: number;
  /** `pushStartTime` and `bootId` from the owner record; absent in records of earlier versions. */
  readonly recordedStartTime: number | undefined;
  readonly recordedBootId: string | undefined;
  /** This node's pid, process group and user (undefined when unknown). */
  readonly ownPid: number;
  readonly ownGroup: number | undefined;
  readonly ownUid: number | undefined;
  /** This machine's boot id now (undefined when unknown). */
  readonly bootId: string | undefined;
  /**
   * The process with that pid now: undefined when none runs (gone, or a zombie); its fields
   * undefined when they could not be read.
   */
  readonly running: RunningProcess | undefined;
}

export interface RunningProcess {
  readonly startTime: number | undefined;
  readonly argv0: string | undefined;
  /** Its process group: a push runs as the leader of a group of its own. */
  readonly group: number | undefined;
  /** Its user: a node only ever starts pushes as itself. */
  readonly uid: number | undefined;
}

export type OrphanPushVerdict =
  /** Proved to be the orphaned `git push`: it may be waited for and its group killed. */
  | 'orphaned-push'
  /** No process runs with that pid: nothing to do. */
  | 'gone'
  /** 0, 1, negative, not an integer: as a process group these mean this node's group, every process, … */
  | 'invalid-pid'
  | 'own-process'
  /** A record without start time or boot id (written by an earlier version): nothing to prove it by. */
  | 'unrecorded'
  | 'other-boot'
  | 'other-start-time'
  /** Not the leader of its own group, or another user's: not a push this node's kind started. */
  | 'not-group-leader'
  | 'other-user'
  | 'not-git';

/**
 * May the process group of the recorded push be signalled? Only when every fact says it is the
 * very `git push` the former holder started on this machine: the pid sane and not this node's,
 * the same boot, the same start time (not a later process reusing the pid), the leader of its own
 * process group, run by this node's user, and git's command. Start time and boot id are readable
 * by anyone, so a forger could copy them from another git; the group and the user narrow what such
 * a record can name to pushes that a node of this user started.
 * Anything short of that is left alone: the lock is still broken as stale, only nothing is killed.
 */
export function judgeOrphanPush(facts: OrphanPushFacts): OrphanPushVerdict {
  const { pid } = facts;
  // kill(-0) is this node's own group, kill(-1) every process it may signal: never let a record get there.
  if (!Number.isSafeInteger(pid) || pid <= 1) return 'invalid-pid';
  if (pid === facts.ownPid || pid === facts.ownGroup) return 'own-process';
  if (facts.running === undefined) return 'gone';
  // Records of the version before start times were recorded name a pid and nothing else; after a
  // crash that pid may well belong to another process by now, so they cannot be acted on.
  if (facts.recordedStartTime === undefined || facts.recordedBootId === undefined) return 'unrecorded';
  if (facts.bootId === undefined || facts.recordedBootId !== facts.bootId) return 'other-boot';
  if (facts.running.startTime === undefined || facts.running.startTime !== facts.recordedStartTime) return 'other-start-time';
  if (facts.running.group !== pid) return 'not-group-leader';
  if (facts.ownUid === undefined || facts.running.uid !== facts.ownUid) return 'other-user';
  if (facts.running.argv0 === undefined || basename(facts.running.argv0) !== 'git') return 'not-git';
  return 'orphaned-push';
}
