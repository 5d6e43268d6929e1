import { describe, expect, it, vi } from 'vitest';
import { Waker } from '../../../src/runtime/waker.js';

describe('Waker', () => {
  it('says "slot" when only freed push slots woke it, "other" as soon as anything else did', async () => {
    const waker = new Waker();
    waker.wake('slot');
    waker.wake('slot');
    expect(await waker.wait(60_000)).toBe('slot');

    waker.wake('slot');
    waker.wake();
    waker.wake('slot');
    expect(await waker.wait(60_000)).toBe('other');
  });

  it('a wake-up during the wait ends it with that reason, and is not carried into the next wait', async () => {
    vi.useFakeTimers();
    try {
      const waker = new Waker();
      const first = waker.wait(60_000);
      waker.wake('slot');
      expect(await first).toBe('slot');
      const second = waker.wait(1000);
      vi.advanceTimersByTime(1000);
      expect(await second).toBe('other');
    } finally {
      vi.useRealTimers();
    }
  });
});
