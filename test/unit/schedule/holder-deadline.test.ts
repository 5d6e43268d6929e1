import { describe, expect, it } from 'vitest';
import { holderMustStop } from '../../../src/schedule/holder-deadline.js';
import { FakeClock } from '../../support/fake-clock.js';

describe('when a holder whose heartbeat writes fail must stop', () => {
  it('goes on until lockStale / 2 after the start of its last successful write, and stops from then on', () => {
    const clock = new FakeClock();
    const wroteAt = clock.monotonic();
    clock.advance(2999);
    expect(holderMustStop(wroteAt, clock.monotonic(), 6000)).toBe(false);
    clock.advance(1);
    expect(holderMustStop(wroteAt, clock.monotonic(), 6000)).toBe(true);
    clock.advance(10_000);
    expect(holderMustStop(wroteAt, clock.monotonic(), 6000)).toBe(true);
  });

  it('counts from the last write that succeeded, not the first', () => {
    const clock = new FakeClock();
    clock.advance(5000);
    const lastOk = clock.monotonic();
    clock.advance(1000);
    expect(holderMustStop(lastOk, clock.monotonic(), 2000)).toBe(true);
    expect(holderMustStop(lastOk, clock.monotonic(), 6000)).toBe(false);
  });

  it('a holder that never wrote a record must stop at once', () => {
    expect(holderMustStop(Number.NEGATIVE_INFINITY, 0, 6000)).toBe(true);
  });
});
