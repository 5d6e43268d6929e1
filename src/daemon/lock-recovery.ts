import { basename } from 'node:path';
import { ignoreEvents, type EventSink } from '../schedule/events.js';
import { urlKind } from '../config/remote-url.js';
import { LockObserver } from '../lock/lock-observer.js';
import type { OwnerRecord } from '../lock/owner-record.js';
import { ownerSignature, type UriLocks } from '../lock/uri-lock.js';
import type { Log } from '../runtime/log.js';
import type { Clock } from '../runtime/clock.js';
import { ownProcessGroup, readBootId, readCmdline, readProcessUid, readProcStat } from '../runtime/process-identity.js';
import type { TaskStore } from '../store/task-store.js';
import { judgeOrphanPush, type OrphanPushVerdict, type RunningProcess } from './orphan-push-proof.js';
import { errnoName } from '../runtime/errno.js';
import { isLiveChildGroup } from '../push/run-process.js';

export interface ProcessControl {
  isAlive(pid: number): boolean;
  /** SIGKILL a process group (a dead node's orphaned `git push` on this host). */
  killGroup(pid: number): void;
  /** Resolves once `pid` is no longer alive, or after `timeoutMs`. */
  waitForExit(pid: number, timeoutMs: number): Promise<void>;
  /** The start time (clock ticks after boot), first command-line word, group, user and parent of `pid` now; undefined fields when unreadable. */
  identify(pid: number): RunningProcess;
  /** This machine's boot id, undefined when unknown. */
  bootId(): string | undefined;
  /** This node's own pid and process group: never signalled, whatever a record says; `runtime` is the file name of the program it runs on. */
  self(): { pid: number; group: number | undefined; uid: number | undefined; runtime: string };
  /** Whether `pid` leads a process group this node started and still runs: its own push, never signalled. */
  ownsGroup(pid: number): boolean;
}

export const realProcessControl: ProcessControl = {
  isAlive(pid) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      return errnoName(error) === 'EPERM';
    }
    // A process that exited but was not reaped yet still answers signal 0: the orphaned push of
    // a dead node (until init reaps it) or the finished push of a paused one (its parent is stopped).
    const state = readProcStat(pid)?.state;
    return state !== 'Z' && state !== 'X';
  },
  killGroup(pid) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  },
  async waitForExit(pid, timeoutMs) {
    const deadline = performance.now() + timeoutMs;
    while (realProcessControl.isAlive(pid) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  },
  identify(pid) {
    const stat = readProcStat(pid);
    const parent = stat === undefined ? undefined : { pid: stat.ppid, argv: readCmdline(stat.ppid), state: readProcStat(stat.ppid)?.state };
    return { startTime: stat?.startTime, group: stat?.pgrp, argv0: readCmdline(pid)?.[0], uid: readProcessUid(pid), parent };
  },
  bootId: readBootId,
  self: () => ({ pid: process.pid, group: ownProcessGroup(), uid: process.getuid?.(), runtime: basename(process.execPath) }),
  ownsGroup: isLiveChildGroup,
};

export interface LockRecoveryOptions {
  readonly locks: UriLocks;
  readonly store: Pick<TaskStore, 'recoverLockFolder'>;
  readonly clock: Clock;
  readonly log: Log;
  /** This machine's host name: only a record naming it can name a push this node may signal. */
  readonly host: string;
  readonly processes: ProcessControl;
  readonly lockStaleMs: () => number;
  /** Tasks of this lock folder went back to waiting/: push them on the next pass. */
  readonly onRecovered: (uriKey: string) => void;
  readonly events?: EventSink;
}

/** A stale lock to break, with its record (whatever someone wrote there). */
interface BreakingLock {
  readonly lockName: string;
  readonly owner: OwnerRecord | undefined;
  /** Whether the push the record names is proved to be the orphaned one right now. */
  readonly provedOrphan: () => boolean;
}

/**
 * Gets dead holders' work moving again without anyone restarting anything: this node's own
 * earlier claims at start-up, stale locks of any node (takeover), and tombstones a breaker left
 * behind. Tasks go back to waiting/ with their original mtimes, so they are due at once.
 */
export class LockRecovery {
  readonly observer: LockObserver;
  private takeovers = 0;
  private readonly events: EventSink;

  constructor(private readonly options: LockRecoveryOptions) {
    this.events = options.events ?? ignoreEvents;
    this.observer = new LockObserver(options.locks, options.clock, options.lockStaleMs);
  }

  get takeoverCount(): number {
    return this.takeovers;
  }

  /** Start-up: this node id's claims from an earlier run (the id is known free by now). */
  async recoverOwn(nodeId: string): Promise<number> {
    const own: BreakingLock[] = [];
    const { locks } = await this.options.locks.listEntries();
    for (const lockName of locks) {
      const owner = await this.options.locks.readOwner(lockName);
      if (owner?.nodeId === nodeId) own.push(this.breaking(lockName, owner));
    }
    await Promise.all(own.map((lock) => this.letOrphanPushEnd(lock)));
    let recovered = 0;
    for (const lock of own) recovered += (await this.breakAndRecover(lock, 'recovered own earlier claim')) ?? 0;
    return recovered;
  }

  /** One observer pass; `ownLeases` are the locks this process holds right now, `ownLocks` their names. */
  async pass(ownLeases: ReadonlySet<string>, ownLocks: ReadonlySet<string> = new Set()): Promise<void> {
    const { stale, abandonedTombstones } = await this.observer.scan(ownLeases, ownLocks);
    const breaking = stale.map((lock) => ({ ...this.breaking(lock.lockName, lock.owner), unchangedMs: lock.unchangedMs }));
    // The former holders' pushes end side by side: waited for one after another, n of them would
    // hold the pass up to n × lockStale.
    const waited = await Promise.all(breaking.map((lock) => this.isolated(lock.lockName, () => this.letOrphanPushEnd(lock))));
    // Each lock on its own: one that cannot be recovered costs its own URI, not the others'.
    for (const [index, lock] of breaking.entries()) {
      if (waited[index] !== true) continue;
      await this.isolated(lock.lockName, async () => {
        const moved = await this.breakAndRecover(lock, 'took over a stale URI lock', lock.unchangedMs);
        if (moved !== undefined) {
          this.takeovers++;
          this.events({ type: 'takeover', uriKey: lock.lockName, formerNode: lock.owner?.nodeId ?? null, tasks: moved });
        }
      });
    }
    for (const tombstone of abandonedTombstones) {
      await this.isolated(tombstone, async () => {
        const { recovered, removed } = await this.options.store.recoverLockFolder(tombstone);
        this.observer.forget(tombstone);
        if (recovered > 0 || removed) this.options.log.info({ tombstone, tasks: recovered }, 'swept an abandoned tombstone');
        if (recovered > 0) this.options.onRecovered(tombstone.slice(0, 40));
      });
    }
  }

  /** Whether `recover` succeeded; a failure is logged and left for a later pass. */
  private async isolated(lock: string, recover: () => Promise<void>): Promise<boolean> {
    try {
      await recover();
      return true;
    } catch (error) {
      this.options.log.warn({ lock, err: String(error) }, 'could not recover a lock folder; trying again on a later pass');
      return false;
    }
  }

  /** A lock about to be broken, and whether the push its record names is proved to be the orphaned one right now (said at most once per lock when it is not). */
  private breaking(lockName: string, owner: OwnerRecord | undefined): BreakingLock {
    let warned = false;
    const provedOrphan = (): boolean => {
      const verdict = this.judgeRecordedPush(owner);
      if (verdict === 'orphaned-push') return true;
      if (verdict !== undefined && verdict !== 'gone' && !warned) {
        warned = true;
        // The lock name and the pid only: the rest of the record is whatever someone wrote there.
        this.options.log.warn(
          { lock: lockName, pushPid: owner?.pushPid, reason: verdict },
          'the recorded push process could not be proved to be the orphaned push; not signalling it',
        );
      }
      return false;
    };
    return { lockName, owner, provedOrphan };
  }

  private async breakAndRecover(lock: BreakingLock, message: string, unchangedMs?: number): Promise<number | undefined> {
    const { lockName, owner } = lock;
    const tombstone = await this.options.locks.breakStale(lockName, ownerSignature(owner));
    this.observer.forget(lockName);
    if (tombstone === undefined) return undefined;
    // The lock is ours to clear now. A dead holder's git push may still run on this host: stop
    // it before the tasks go back to waiting and anyone pushes the URI again. Judged again, not
    // remembered from before the wait: the push may have ended and its pid been reused meanwhile.
    if (owner?.pushPid !== undefined && lock.provedOrphan()) this.options.processes.killGroup(owner.pushPid);
    const { recovered } = await this.options.store.recoverLockFolder(tombstone);
    this.options.log.info(
      { lock: lockName, formerNode: owner?.nodeId ?? null, formerPid: owner?.pid ?? null, formerHost: owner?.host ?? null, tasks: recovered, unchangedMs },
      message,
    );
    this.options.onRecovered(lockName);
    return recovered;
  }

  /**
   * What the process the owner record names as its push is (orphan-push-proof.ts); undefined
   * when the record names none on this host. The store is shared and writable by others, so a
   * record naming this host proves nothing by itself.
   */
  private judgeRecordedPush(owner: OwnerRecord | undefined): OrphanPushVerdict | undefined {
    if (owner?.host !== this.options.host || owner.pushPid === undefined) return undefined;
    const pid = owner.pushPid;
    const self = this.options.processes.self();
    // Signal 0 and /proc reads are harmless for any pid, so the facts are gathered before judging.
    return judgeOrphanPush({
      pid,
      recordedStartTime: owner.pushStartTime,
      recordedBootId: owner.bootId,
      ownPid: self.pid,
      ownGroup: self.group,
      ownUid: self.uid,
      ownRuntime: self.runtime,
      startedByThisNode: this.options.processes.ownsGroup(pid),
      bootId: this.options.processes.bootId(),
      running: this.options.processes.isAlive(pid) ? this.options.processes.identify(pid) : undefined,
    });
  }

  /**
   * A dead holder's git push may still run on this host. Over the network (git://, ssh://,
   * http) killing it stops only the client: the destination's receive-pack and its hooks go on,
   * and a push started now would overlap them. So while the lock still keeps everyone off the
   * URI, let it end — it ends once the destination has applied or refused it — for at most
   * lockStale; one still running then is hung and is killed once the lock is broken. A local
   * (file://) push runs receive-pack inside its own process group: killing it stops both. Only a
   * process proved to be that push is waited for: a forged record must not hold the lock up.
   */
  private async letOrphanPushEnd({ lockName, owner, provedOrphan }: BreakingLock): Promise<void> {
    if (owner?.host !== this.options.host || owner.pushPid === undefined) return;
    const kind = urlKind(owner.uri);
    if (kind === 'file' || kind === 'path' || !provedOrphan()) return;
    this.options.log.info({ lock: lockName, formerNode: owner.nodeId, pushPid: owner.pushPid }, "waiting for the former holder's git push to end");
    await this.options.processes.waitForExit(owner.pushPid, this.options.lockStaleMs());
  }
}
