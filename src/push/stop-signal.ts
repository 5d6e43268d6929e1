import type { RemoteConfig } from '../config/types.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { systemTimers, type Timers } from '../runtime/timers.js';
import { pushFailure } from './failure-class.js';
import { limitMessage, limitReached, limitsOf, nextCheckAt, type LimitFired, type PushLimits } from './push-limits.js';
import type { PushFailure } from './push-types.js';

/** Why a push was stopped before git finished: one of its limits, or the caller. */
export type StopReason = LimitFired | 'aborted';

export interface StopSignal {
  /** Aborts when a limit runs out or the caller aborts, whichever comes first. */
  readonly signal: AbortSignal;
  reason(): StopReason | undefined;
  /** git wrote something (a progress line, a ref result): the idle limit starts over. */
  activity(): void;
  dispose(): void;
}

export interface StopTime {
  readonly clock: Clock;
  readonly timers: Timers;
}

export const systemStopTime: StopTime = { clock: systemClock, timers: systemTimers };

/**
 * One signal for a whole push (local reads, ls-remote, creation, every chunk), so the
 * deadline counts the push as a whole and the idle limit the gaps between git's outputs,
 * whichever process they come from. `activity()` only records the instant; the one timer
 * re-arms itself when it finds git was busy meanwhile (see `nextCheckAt`).
 */
export function stopSignal(limits: PushLimits, outer: AbortSignal | undefined, time: StopTime): StopSignal {
  const controller = new AbortController();
  const startedAt = time.clock.monotonic();
  let lastActivityAt = startedAt;
  let reason: StopReason | undefined;
  let cancelTimer: (() => void) | undefined;

  const stop = (why: StopReason): void => {
    reason ??= why;
    cancelTimer?.();
    cancelTimer = undefined;
    controller.abort();
  };
  const arm = (now: number): void => {
    const at = nextCheckAt(limits, { startedAt, lastActivityAt });
    // Timers may fire a fraction of a millisecond early: the check then simply comes again.
    cancelTimer = at === undefined ? undefined : time.timers.after(Math.max(0, at - now), check);
  };
  function check(): void {
    cancelTimer = undefined;
    if (reason !== undefined) return;
    const now = time.clock.monotonic();
    const fired = limitReached(limits, { startedAt, lastActivityAt }, now);
    if (fired === undefined) arm(now);
    else stop(fired);
  }
  const onOuterAbort = (): void => stop('aborted');

  if (outer?.aborted) stop('aborted');
  else {
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    arm(startedAt);
  }
  return {
    signal: controller.signal,
    reason: () => reason,
    activity: () => {
      lastActivityAt = time.clock.monotonic();
    },
    dispose: () => {
      cancelTimer?.();
      cancelTimer = undefined;
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}

const STOPPED = 'git and the processes it started (ssh) were stopped';

/** The failure of a push stopped before git finished, naming what stopped it; undefined when nothing did. */
export function stoppedFailure(
  reason: StopReason | undefined,
  remote: Pick<RemoteConfig, 'name' | 'timeoutMs' | 'pushDeadlineMs'>,
  stderrTail: string,
): PushFailure | undefined {
  if (reason === undefined) return undefined;
  if (reason === 'aborted') return pushFailure('aborted', `push aborted; ${STOPPED}`, stderrTail);
  return pushFailure('timeout', `${limitMessage(remote.name, limitsOf(remote), reason)}; ${STOPPED}`, stderrTail);
}
