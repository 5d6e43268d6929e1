import { describe, expect, it } from 'vitest';
import { formatLimit, limitMessage, limitReached, limitsOf, nextCheckAt } from '../../../src/push/push-limits.js';

const started = { startedAt: 1000, lastActivityAt: 1000 };

describe('limitReached: is a push idle or past its deadline?', () => {
  it('never stops a push when neither limit is set', () => {
    const none = { idleMs: 0, deadlineMs: 0 };
    expect(limitReached(none, started, 1000 + 86_400_000)).toBeUndefined();
    expect(nextCheckAt(none, started)).toBeUndefined();
  });

  it('stops after idleMs without activity, not a millisecond before', () => {
    const limits = { idleMs: 5000, deadlineMs: 0 };
    expect(limitReached(limits, started, 5999)).toBeUndefined();
    expect(limitReached(limits, started, 6000)).toBe('idle');
  });

  it('counts the idle limit from the last activity, so a push that keeps writing runs far past it', () => {
    const limits = { idleMs: 5000, deadlineMs: 0 };
    // An hour of progress lines, each 4.9 s after the one before: never idle.
    for (let at = 1000; at < 3_600_000; at += 4900) {
      expect(limitReached(limits, { startedAt: 1000, lastActivityAt: at }, at + 4899)).toBeUndefined();
    }
    expect(limitReached(limits, { startedAt: 1000, lastActivityAt: 3_600_000 }, 3_605_000)).toBe('idle');
  });

  it('stops at the deadline however busy the push is', () => {
    const limits = { idleMs: 5000, deadlineMs: 60_000 };
    expect(limitReached(limits, { startedAt: 1000, lastActivityAt: 60_999 }, 60_999)).toBeUndefined();
    expect(limitReached(limits, { startedAt: 1000, lastActivityAt: 61_000 }, 61_000)).toBe('deadline');
  });

  it('names the limit that ran out first when a late check finds both expired, the deadline on a tie', () => {
    const limits = { idleMs: 5000, deadlineMs: 10_000 };
    expect(limitReached(limits, { startedAt: 0, lastActivityAt: 2000 }, 20_000)).toBe('idle'); // idle at 7 s, deadline at 10 s
    expect(limitReached(limits, { startedAt: 0, lastActivityAt: 8000 }, 20_000)).toBe('deadline'); // deadline at 10 s, idle at 13 s
    expect(limitReached(limits, { startedAt: 0, lastActivityAt: 5000 }, 10_000)).toBe('deadline');
  });

  it('checks next at the earlier of the two expiries', () => {
    expect(nextCheckAt({ idleMs: 5000, deadlineMs: 0 }, { startedAt: 0, lastActivityAt: 3000 })).toBe(8000);
    expect(nextCheckAt({ idleMs: 0, deadlineMs: 7000 }, { startedAt: 0, lastActivityAt: 3000 })).toBe(7000);
    expect(nextCheckAt({ idleMs: 5000, deadlineMs: 7000 }, { startedAt: 0, lastActivityAt: 3000 })).toBe(7000);
    expect(nextCheckAt({ idleMs: 5000, deadlineMs: 9000 }, { startedAt: 0, lastActivityAt: 3000 })).toBe(8000);
  });
});

describe('limit messages', () => {
  it('say which limit fired and which key sets it', () => {
    const limits = limitsOf({ timeoutMs: 5000, pushDeadlineMs: 600_000 });
    expect(limits).toEqual({ idleMs: 5000, deadlineMs: 600_000 });
    expect(limitMessage('dr', limits, 'idle')).toBe('no progress for 5 s (remote.dr.timeout)');
    expect(limitMessage('dr', limits, 'deadline')).toBe('push did not finish within 10 min (remote.dr.pushDeadline)');
  });

  it('show a limit as it was most likely written', () => {
    expect(formatLimit(1500)).toBe('1500 ms');
    expect(formatLimit(30_000)).toBe('30 s');
    expect(formatLimit(90_000)).toBe('90 s');
    expect(formatLimit(7_200_000)).toBe('120 min');
  });
});
