import { describe, expect, it } from 'vitest';
import { stoppedFailure, stopSignal } from '../../../src/push/stop-signal.js';
import { FakeClock, FakeTimers } from '../../support/fake-clock.js';

function fakeTime() {
  const clock = new FakeClock();
  return { clock, timers: new FakeTimers(clock) };
}

/** Advance in steps, reporting git output after each one, as a push that makes progress would. */
async function busyFor(time: ReturnType<typeof fakeTime>, totalMs: number, everyMs: number, activity: () => void): Promise<void> {
  for (let elapsed = 0; elapsed < totalMs; elapsed += everyMs) {
    await time.timers.advance(everyMs);
    activity();
  }
}

describe('stopSignal: the idle limit (remote.NAME.timeout)', () => {
  it('lets a push that keeps writing run for many times the limit', async () => {
    const time = fakeTime();
    const stop = stopSignal({ idleMs: 5000, deadlineMs: 0 }, undefined, time);
    await busyFor(time, 10 * 60_000, 4900, stop.activity);
    expect(stop.signal.aborted).toBe(false);
    expect(stop.reason()).toBeUndefined();
    stop.dispose();
  });

  it('stops a push exactly when the limit has passed since its last output', async () => {
    const time = fakeTime();
    const stop = stopSignal({ idleMs: 5000, deadlineMs: 0 }, undefined, time);
    await busyFor(time, 20_000, 1000, stop.activity);
    await time.timers.advance(4999);
    expect(stop.signal.aborted).toBe(false);
    await time.timers.advance(1);
    expect(stop.signal.aborted).toBe(true);
    expect(stop.reason()).toBe('idle');
  });

  it('stops a push that never writes anything after the limit', async () => {
    const time = fakeTime();
    const stop = stopSignal({ idleMs: 2000, deadlineMs: 0 }, undefined, time);
    await time.timers.advance(1999);
    expect(stop.signal.aborted).toBe(false);
    await time.timers.advance(1);
    expect(stop.reason()).toBe('idle');
  });

  it('never stops a push when no limit is set', async () => {
    const time = fakeTime();
    const stop = stopSignal({ idleMs: 0, deadlineMs: 0 }, undefined, time);
    await time.timers.advance(7 * 86_400_000);
    expect(stop.signal.aborted).toBe(false);
  });
});

describe('stopSignal: the deadline (remote.NAME.pushDeadline)', () => {
  it('stops a busy push at the deadline', async () => {
    const time = fakeTime();
    const stop = stopSignal({ idleMs: 5000, deadlineMs: 30_000 }, undefined, time);
    await busyFor(time, 29_000, 1000, stop.activity);
    expect(stop.signal.aborted).toBe(false);
    await time.timers.advance(1000);
    expect(stop.reason()).toBe('deadline');
  });

  it('works alone, without an idle limit', async () => {
    const time = fakeTime();
    const stop = stopSignal({ idleMs: 0, deadlineMs: 3000 }, undefined, time);
    await time.timers.advance(2999);
    expect(stop.signal.aborted).toBe(false);
    await time.timers.advance(1);
    expect(stop.reason()).toBe('deadline');
  });
});

describe('stopSignal: the caller', () => {
  it('aborts with the caller, and keeps the first reason', async () => {
    const time = fakeTime();
    const outer = new AbortController();
    const stop = stopSignal({ idleMs: 1000, deadlineMs: 0 }, outer.signal, time);
    outer.abort();
    expect(stop.reason()).toBe('aborted');
    await time.timers.advance(5000);
    expect(stop.reason()).toBe('aborted');
  });

  it('is aborted from the start when the caller already was', () => {
    const stop = stopSignal({ idleMs: 1000, deadlineMs: 0 }, AbortSignal.abort(), fakeTime());
    expect(stop.signal.aborted).toBe(true);
    expect(stop.reason()).toBe('aborted');
  });

  it('fires nothing once disposed', async () => {
    const time = fakeTime();
    const outer = new AbortController();
    const stop = stopSignal({ idleMs: 1000, deadlineMs: 2000 }, outer.signal, time);
    stop.dispose();
    await time.timers.advance(5000);
    outer.abort();
    expect(stop.signal.aborted).toBe(false);
  });
});

describe('stoppedFailure', () => {
  const remote = { name: 'dr', timeoutMs: 5000, pushDeadlineMs: 3_600_000 };

  it('is a retryable timeout naming the limit and its key', () => {
    expect(stoppedFailure('idle', remote, 'tail')).toEqual({
      kind: 'timeout',
      retryable: true,
      stderrTail: 'tail',
      message: 'no progress for 5 s (remote.dr.timeout); git and the processes it started (ssh) were stopped',
    });
    expect(stoppedFailure('deadline', remote, '')).toMatchObject({
      kind: 'timeout',
      retryable: true,
      message: 'push did not finish within 60 min (remote.dr.pushDeadline); git and the processes it started (ssh) were stopped',
    });
  });

  it('is a non-retryable abort when the caller stopped the push, and nothing when nobody did', () => {
    expect(stoppedFailure('aborted', remote, '')).toMatchObject({ kind: 'aborted', retryable: false });
    expect(stoppedFailure(undefined, remote, '')).toBeUndefined();
  });
});
