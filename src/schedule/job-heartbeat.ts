import { redactUrl } from '../runtime/redact.js';
import { holderMustStop } from './holder-deadline.js';
import type { Lease, SchedulerDeps } from './ports.js';

/** Why a job's heartbeat stopped its push: how long its record went unwritten, and the last error. */
export interface HeartbeatStall {
  readonly sinceMs: number;
  readonly error: unknown;
}

const LOST_LOCK = 'lost the URI lock while holding it; aborting the push';

interface PushProcess {
  readonly pushPid: number;
  readonly pushStartTime?: number;
  readonly bootId?: string;
}

/**
 * The heartbeat of one push job's lock: advances the owner record's counter every
 * max(250 ms, lockStale / 6) and once more when git is spawned (to record the push process).
 * Its `signal` stops the job's push when the node stops (the outer signal), when the lock is found
 * lost, and when the record has not been written for lockStale / 2 (holderMustStop): a holder whose
 * writes fail (a full store) looks dead to its peers, who take the lock over after lockStale and push too.
 */
export class JobHeartbeat {
  /** Beats run one at a time and are awaited before the release, so a late beat can never race the release and mistake our own clean-up for a takeover. */
  private beating: Promise<void> = Promise.resolve();
  private finished = false;
  private pushProcess: PushProcess | undefined;
  /** The push process the last successful beat wrote into the record. */
  private recorded: PushProcess | undefined;
  /** For leases that do not say when their record was last written: the start of the last beat that succeeded. */
  private lastBeatAt: number;
  private lastError: unknown;
  private stopTimer: () => void = () => undefined;
  private stallSeen: HeartbeatStall | undefined;
  private readonly control = new AbortController();
  private readonly onOuterAbort = (): void => this.control.abort();

  constructor(
    private readonly deps: Pick<SchedulerDeps, 'clock' | 'log' | 'timers' | 'identifyPush'>,
    private readonly lock: Lease,
    private readonly uri: string,
    private readonly outer: AbortSignal,
    private readonly lockStaleMs: number,
    /** Monotonic time just before the lock was taken: its first record write began later. */
    acquiredFrom: number,
  ) {
    this.lastBeatAt = acquiredFrom;
    outer.addEventListener('abort', this.onOuterAbort, { once: true });
    if (outer.aborted) this.control.abort();
  }

  /** What the job's push and slot wait stop on. */
  get signal(): AbortSignal {
    return this.control.signal;
  }

  /** Set once the heartbeat stopped the push because the record could not be written. */
  get stall(): HeartbeatStall | undefined {
    return this.stallSeen;
  }

  start(): void {
    this.stopTimer = this.deps.timers.every(Math.max(250, Math.floor(this.lockStaleMs / 6)), () => this.beat());
  }

  /**
   * For the pusher: record a just spawned git's process group (and what proves it is that
   * process), and answer whether git may start (run-process.ts holds it until then). Only when
   * that record was written and the lock is still ours: a holder paused (SIGSTOP, a stalled VM)
   * after the write, past lockStale, finds its lock taken over here, instead of starting git
   * beside the new holder's push (DESIGN.md "Heartbeat").
   */
  readonly onPushSpawn = async (pid: number): Promise<boolean> => {
    // Read at once, while the process surely exists. Every key is set (undefined when unknown),
    // so the record never pairs this pid with an earlier push's start time.
    const identity = this.deps.identifyPush?.(pid);
    const pushProcess = { pushPid: pid, pushStartTime: identity?.pushStartTime, bootId: identity?.bootId };
    this.pushProcess = pushProcess;
    this.beat();
    await this.beating;
    if (this.control.signal.aborted) return false;
    if (this.recorded !== pushProcess) this.abort('could not record the push process in the lock; the push waits');
    else if (!(await this.lock.stillMine())) this.abort(LOST_LOCK);
    return !this.control.signal.aborted;
  };

  /** No more beats; resolves when the last one is over. */
  async stop(): Promise<void> {
    this.finished = true;
    this.stopTimer();
    this.outer.removeEventListener('abort', this.onOuterAbort);
    await this.beating;
  }

  private beat(): void {
    if (this.finished || this.stopIfOverdue()) return;
    const startedAt = this.deps.clock.monotonic();
    const { lock, deps } = this;
    const pushProcess = this.pushProcess;
    this.beating = this.beating.then(() =>
      lock.heartbeat(pushProcess ?? {}).then(
        (mine) => {
          if (mine) {
            this.lastBeatAt = startedAt;
            this.recorded = pushProcess;
            return;
          }
          if (this.finished || this.control.signal.aborted) return;
          this.abort(LOST_LOCK);
        },
        (error: unknown) => {
          this.lastError = error;
          deps.log.warn({ uri: redactUrl(this.uri), err: String(error) }, 'lock heartbeat failed');
          this.stopIfOverdue();
        },
      ),
    );
  }

  private abort(message: string): void {
    this.deps.log.warn({ uri: redactUrl(this.uri), lease: this.lock.leaseId }, message);
    this.control.abort();
  }

  /**
   * Checked on every timer tick, not only when a write fails: a write that hangs (an unanswering
   * file server) leaves the counter as still as one that fails.
   */
  private stopIfOverdue(): boolean {
    if (this.stallSeen !== undefined) return true;
    if (this.finished || this.control.signal.aborted) return false;
    const lastWriteAt = this.lock.lastWriteAt ?? this.lastBeatAt;
    const now = this.deps.clock.monotonic();
    if (!holderMustStop(lastWriteAt, now, this.lockStaleMs)) return false;
    const sinceMs = Math.round(now - lastWriteAt);
    this.stallSeen = { sinceMs, error: this.lastError };
    this.deps.log.warn(
      {
        uri: redactUrl(this.uri),
        lease: this.lock.leaseId,
        sinceMs,
        lockStaleMs: this.lockStaleMs,
        err: this.lastError === undefined ? 'no write finished' : String(this.lastError),
      },
      `lock heartbeat writes failed for ${sinceMs}ms; aborting the push before the lock can be judged stale`,
    );
    this.control.abort();
    return true;
  }
}
