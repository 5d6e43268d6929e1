import { describe, expect, it } from 'vitest';
import { LogThrottle } from '../../../src/runtime/log-throttle.js';
import { FakeClock } from '../../support/fake-clock.js';

describe('rate-limited log lines', () => {
  it('lets the first line out, counts the ones within the interval, and reports that count with the next one out', () => {
    const clock = new FakeClock();
    const throttle = new LogThrottle(60_000);
    expect(throttle.take('push job failed', clock.monotonic())).toEqual({ log: true, suppressed: 0 });
    for (let i = 0; i < 59; i++) {
      clock.advance(1000);
      expect(throttle.take('push job failed', clock.monotonic()).log).toBe(false);
    }
    clock.advance(1000);
    expect(throttle.take('push job failed', clock.monotonic())).toEqual({ log: true, suppressed: 59 });
    clock.advance(1000);
    expect(throttle.take('push job failed', clock.monotonic()).log).toBe(false);
  });

  it('keeps each message to its own limit', () => {
    const throttle = new LogThrottle(60_000);
    expect(throttle.take('push job failed', 0).log).toBe(true);
    expect(throttle.take('distributor pass failed', 0).log).toBe(true);
    expect(throttle.take('push job failed', 1).log).toBe(false);
  });
});
