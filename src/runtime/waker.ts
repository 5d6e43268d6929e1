import { systemTimers, type Timers } from './timers.js';

/**
 * Why a sleep ended: `slot` when the only reasons were freed push slots (the pass that follows
 * may reuse the last listing), `other` for a timeout, a file-watch hint or any other wake-up.
 */
export type WakeReason = 'slot' | 'other';

/** A sleep that something else can cut short: a file-watch hint or a finished push. */
export class Waker {
  private pending: (() => void) | undefined;
  private woken: WakeReason | undefined;

  constructor(private readonly timers: Timers = systemTimers) {}

  wake(reason: WakeReason = 'other'): void {
    this.woken = this.woken === 'other' ? 'other' : reason;
    this.pending?.();
  }

  wait(ms: number): Promise<WakeReason> {
    if (this.woken !== undefined) {
      const reason = this.woken;
      this.woken = undefined;
      return Promise.resolve(reason);
    }
    return new Promise((resolve) => {
      const cancel = this.timers.after(Math.max(0, ms), () => done('other'));
      const done = (reason: WakeReason): void => {
        cancel();
        this.pending = undefined;
        this.woken = undefined;
        resolve(reason);
      };
      this.pending = () => done(this.woken ?? 'other');
    });
  }
}
