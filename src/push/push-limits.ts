import type { RemoteConfig } from '../config/types.js';

/**
 * The two limits of one push, in ms, 0 = none.
 *
 * - `idleMs` (`remote.NAME.timeout`): what Gerrit means by it, JGit's transport timeout. The push
 *   stops only after this long without a byte from git (progress on stderr, stdout): a large push
 *   that keeps moving may take as long as it needs, a destination that went silent is let go.
 * - `deadlineMs` (`remote.NAME.pushDeadline`): a wall-clock bound on the whole push, for a
 *   destination that trickles bytes forever and would otherwise hold the URI lock.
 */
export interface PushLimits {
  readonly idleMs: number;
  readonly deadlineMs: number;
}

/** Which limit stopped a push. */
export type LimitFired = 'idle' | 'deadline';

/** Monotonic instants of one push: when it started, when git last wrote anything. */
export interface PushActivity {
  readonly startedAt: number;
  readonly lastActivityAt: number;
}

export function limitsOf(remote: Pick<RemoteConfig, 'timeoutMs' | 'pushDeadlineMs'>): PushLimits {
  return { idleMs: remote.timeoutMs, deadlineMs: remote.pushDeadlineMs };
}

/** When each limit runs out, if it is set. */
function expiries(limits: PushLimits, activity: PushActivity): Array<{ fired: LimitFired; at: number }> {
  const found: Array<{ fired: LimitFired; at: number }> = [];
  if (limits.idleMs > 0) found.push({ fired: 'idle', at: activity.lastActivityAt + limits.idleMs });
  if (limits.deadlineMs > 0) found.push({ fired: 'deadline', at: activity.startedAt + limits.deadlineMs });
  return found;
}

/**
 * The limit that has run out at `now`, or undefined. When both have, the one that ran out first
 * is named (the deadline on a tie): that is the one the push would have been stopped by, had the
 * check come on time.
 */
export function limitReached(limits: PushLimits, activity: PushActivity, now: number): LimitFired | undefined {
  const due = expiries(limits, activity).filter((expiry) => expiry.at <= now);
  if (due.length === 0) return undefined;
  return due.reduce((first, next) => (next.at < first.at || (next.at === first.at && next.fired === 'deadline') ? next : first)).fired;
}

/**
 * When to look again, or undefined when nothing is limited. Activity only moves the idle expiry
 * later, so a check that finds git busy just schedules the next one: no timer per byte.
 */
export function nextCheckAt(limits: PushLimits, activity: PushActivity): number | undefined {
  const at = expiries(limits, activity).map((expiry) => expiry.at);
  return at.length === 0 ? undefined : Math.min(...at);
}

/** Names the limit and the key that set it, so an operator knows which one to raise. */
export function limitMessage(remoteName: string, limits: PushLimits, fired: LimitFired): string {
  return fired === 'idle'
    ? `no progress for ${formatLimit(limits.idleMs)} (remote.${remoteName}.timeout)`
    : `push did not finish within ${formatLimit(limits.deadlineMs)} (remote.${remoteName}.pushDeadline)`;
}

/** 5000 → "5 s", 600000 → "10 min", 1500 → "1500 ms": as the limit was most likely written. */
export function formatLimit(ms: number): string {
  if (ms % 1000 !== 0) return `${ms} ms`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
