import { redactUrl } from '../runtime/redact.js';
import { holderMustStop } from './holder-deadline.js';
import type { Lease, SchedulerDeps } from './ports.js';

/** Why a job's heartbeat stopped its push: how long its record went unwritten, and the last error. */
export interface HeartbeatStall {
  readonly sinceMs: number;
  readonly error: unknown;
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
  private pushProcess: { pushPid: number; pushStartTime?: number; bootId?: string } | undefined;
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
   * process). Resolves once that record write is over; git starts only then (run-process.ts).
   */
  readonly onPushSpawn = (pid: number): Promise<void> => {
    // Read at once, while the process surely exists. Every key is set (undefined when unknown),
    // so the record never pairs this pid with an earlier push's start time.
    const identity = this.deps.identifyPush?.(pid);
    this.pushProcess = { pushPid: pid, pushStartTime: identity?.pushStartTime, bootId: identity?.bootId };
    this.beat();
    return this.beating;
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
    this.beating = this.beating.then(() =>
      lock.heartbeat(this.pushProcess ?? {}).then(
        (mine) => {
          if (mine) {
            this.lastBeatAt = startedAt;
            return;
          }
          if (this.finished || this.control.signal.aborted) return;
          deps.log.warn({ uri: redactUrl(this.uri), lease: lock.leaseId }, 'lost the URI lock while holding it; aborting the push');
          this.control.abort();
        },
        (error: unknown) => {
          this.lastError = error;
          deps.log.warn({ uri: redactUrl(this.uri), err: String(error) }, 'lock heartbeat failed');
          this.stopIfOverdue();
        },
      ),
    );
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
