import { describe, expect, it } from 'vitest';
import { mapBounded } from '../../../src/runtime/map-bounded.js';

describe('mapBounded', () => {
  it('keeps results in input order and never exceeds the limit', async () => {
    let inFlight = 0;
    let peak = 0;
    const results = await mapBounded([5, 1, 4, 2, 3], 2, async (n) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise<void>((resolve) => setImmediate(resolve));
      inFlight--;
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(peak).toBe(2);
  });

  it('starts nothing new after a failure and rethrows it once the others settle', async () => {
    const started: number[] = [];
    const failure = new Error('boom');
    await expect(
      mapBounded([1, 2, 3, 4, 5], 1, async (n) => {
        started.push(n);
        if (n === 2) throw failure;
        return n;
      }),
    ).rejects.toBe(failure);
    expect(started).toEqual([1, 2]);
  });

  it('rounds a fractional limit down (at least one call in flight)', async () => {
    const peakFor = async (limit: number): Promise<number> => {
      let inFlight = 0;
      let peak = 0;
      await mapBounded([1, 2, 3, 4, 5, 6], limit, async (n) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise<void>((resolve) => setImmediate(resolve));
        inFlight--;
        return n;
      });
      return peak;
    };
    expect([await peakFor(2.5), await peakFor(0.5)]).toEqual([2, 1]);
  });

  it('handles an empty list', async () => {
    expect(await mapBounded([], 8, async () => 1)).toEqual([]);
  });
});
