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
  /** The file name of the program this node runs on (`node`): a parent running it may be a node. */
  readonly ownRuntime: string;
  /** The pid leads a process group this node started and still runs: one of its own pushes. */
  readonly startedByThisNode: boolean;
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
  /** Its parent now; undefined when it could not be read. */
  readonly parent: ParentProcess | undefined;
}

/**
 * A push's parent is the node that spawned it for as long as that node lives; when the node
 * dies, the kernel hands the push to a reaper (init, or a subreaper such as `systemd --user`).
 */
export interface ParentProcess {
  /** 0 when the parent is outside this pid namespace. */
  readonly pid: number;
  /** Its command line; undefined when it could not be read, empty for a zombie. */
  readonly argv: readonly string[] | undefined;
  /** Its state letter (`/proc/<pid>/stat` field 3), undefined when unreadable: `T` or `t` is stopped. */
  readonly state: string | undefined;
}

export type OrphanPushVerdict =
  /** Proved to be the orphaned `git push`: it may be waited for and its group killed. */
  | 'orphaned-push'
  /** No process runs with that pid: nothing to do. */
  | 'gone'
  /** 0, 1, negative, not an integer: as a process group these mean this node's group, every process, … */
  | 'invalid-pid'
  | 'own-process'
  /** A push this node runs right now. */
  | 'own-push'
  /** A record without start time or boot id (written by an earlier version): nothing to prove it by. */
  | 'unrecorded'
  | 'other-boot'
  | 'other-start-time'
  /** Not the leader of its own group, or another user's: not a push this node's kind started. */
  | 'not-group-leader'
  | 'other-user'
  | 'not-git'
  /** Its parent, or the parent's command line, could not be read: nothing tells it was orphaned. */
  | 'parent-unknown'
  /** Its parent is this node, or may be another node that is not stopped: the push is not an orphan. */
  | 'parent-may-be-node';

/** Whatever a node's command line holds, this is in it: `node …/bin/refrelay.js daemon`, or an executable named so. */
const NODE_MARK = 'refrelay';
/** Process states of a stopped process: by a signal, or at a tracer's stop. */
const STOPPED = new Set(['T', 't']);

/**
 * May the process group of the recorded push be signalled? Only when every fact says it is the
 * very `git push` the former holder started on this machine: the pid sane and not this node's,
 * the same boot, the same start time (not a later process reusing the pid), the leader of its own
 * process group, run by this node's user, and git's command. Start time and boot id are readable
 * by anyone, and the rest is true of any node's live push, so a forger could name the push a live
 * node runs right now: the push must also have been orphaned, its parent no longer a node.
 * Anything short of that is left alone: the lock is still broken as stale, only nothing is killed.
 */
export function judgeOrphanPush(facts: OrphanPushFacts): OrphanPushVerdict {
  const { pid } = facts;
  // kill(-0) is this node's own group, kill(-1) every process it may signal: never let a record get there.
  if (!Number.isSafeInteger(pid) || pid <= 1) return 'invalid-pid';
  if (pid === facts.ownPid || pid === facts.ownGroup) return 'own-process';
  if (facts.startedByThisNode) return 'own-push';
  if (facts.running === undefined) return 'gone';
  return judgeIdentity(facts, facts.running) ?? judgeParent(facts, facts.running.parent) ?? 'orphaned-push';
}

/** Is the running process the push the record names? Undefined when every fact says so. */
function judgeIdentity(facts: OrphanPushFacts, running: RunningProcess): OrphanPushVerdict | undefined {
  // Records of the version before start times were recorded name a pid and nothing else; after a
  // crash that pid may well belong to another process by now, so they cannot be acted on.
  if (facts.recordedStartTime === undefined || facts.recordedBootId === undefined) return 'unrecorded';
  if (facts.bootId === undefined || facts.recordedBootId !== facts.bootId) return 'other-boot';
  if (running.startTime === undefined || running.startTime !== facts.recordedStartTime) return 'other-start-time';
  if (running.group !== facts.pid) return 'not-group-leader';
  if (facts.ownUid === undefined || running.uid !== facts.ownUid) return 'other-user';
  if (running.argv0 === undefined || basename(running.argv0) !== 'git') return 'not-git';
  return undefined;
}

/**
 * Has the push lost the node that spawned it? A node spawns its pushes itself (`push/run-process.ts`),
 * so a live node is their parent; a reaper is not a node. A reaper cannot be told from other processes
 * by what /proc shows, so any parent that runs the program this node runs, or names refrelay, counts
 * as a node: a genuine orphan under such a reaper is left alone rather than a live push killed.
 */
function judgeParent(facts: OrphanPushFacts, parent: ParentProcess | undefined): OrphanPushVerdict | undefined {
  if (parent === undefined || parent.pid === 0 || parent.argv === undefined || parent.argv.length === 0) return 'parent-unknown';
  if (parent.pid === facts.ownPid) return 'parent-may-be-node';
  const program = basename(parent.argv[0] ?? '');
  const mayBeNode = program === facts.ownRuntime || program === 'node' || parent.argv.some((arg) => arg.toLowerCase().includes(NODE_MARK));
  // A node stopped (SIGSTOP, a debugger) does not beat, so its lock goes stale and is taken over
  // as a dead node's: its push is the takeover's to end. Only whoever may signal that node can
  // stop it, and they could kill its push as well: the store alone cannot bring this about.
  if (mayBeNode && !STOPPED.has(parent.state ?? '')) return 'parent-may-be-node';
  return undefined;
}
