import { describe, expect, it } from 'vitest';
import { FairShare, type FairCandidate } from '../../../src/schedule/fair-share.js';
import { FakeClock } from '../../support/fake-clock.js';

const settings = { halfLifeMs: 300_000, liveShares: 100, bulkShares: 25 };
const live = (remote: string, dueAt = 0, remoteShares = 100): FairCandidate => ({ lane: 'live', remote, remoteShares, dueAt });

function usageOf(fair: FairShare, group: string): number | undefined {
  return fair.view().find((view) => view.group === group)?.usageMs;
}

describe('FairShare', () => {
  it("halves a group's usage after one half-life and forgets an idle group once its usage is below 1 ms", () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    const stop = fair.begin(live('a'));
    clock.advance(60_000);
    stop();
    expect(usageOf(fair, 'live/a')).toBe(60_000);
    clock.advance(300_000);
    expect(usageOf(fair, 'live/a')).toBeCloseTo(30_000, -1);
    clock.advance(300_000 * 16); // 60 s × 2^-16 < 1 ms
    fair.observe([]);
    expect(usageOf(fair, 'live/a')).toBeUndefined();
  });

  it('charges a running push continuously, so its group loses the next choice while it runs', () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    fair.observe([live('a'), live('b')]);
    fair.begin(live('a'));
    clock.advance(1000);
    expect(fair.choose([live('a', 0), live('b', 5)], (c) => c)?.remote).toBe('b');
  });

  it('breaks ties by the oldest due candidate, and picks the oldest within the chosen remote', () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    const chosen = fair.choose([live('a', 30), live('b', 20), live('b', 10)], (c) => c);
    expect(chosen).toEqual(live('b', 10));
  });

  it('weighs remotes by their shares: usage ÷ shares', () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    fair.observe([live('heavy', 0, 300), live('light')]);
    fair.begin(live('heavy', 0, 300))();
    const stopHeavy = fair.begin(live('heavy', 0, 300));
    clock.advance(2000);
    stopHeavy();
    const stopLight = fair.begin(live('light'));
    clock.advance(1000);
    stopLight();
    // heavy: 2000 / 300 < light: 1000 / 100
    expect(fair.choose([live('light', 0), live('heavy', 1, 300)], (c) => c)?.remote).toBe('heavy');
  });

  it('prefers live over bulk on a tie and lets bulk through once live has used its larger share', () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    const bulk: FairCandidate = { lane: 'bulk', remote: 'a', remoteShares: 100, dueAt: 0 };
    expect(fair.choose([bulk, live('a', 5)], (c) => c)?.lane).toBe('live');
    const stop = fair.begin(live('a'));
    clock.advance(1000);
    stop(); // live: 1000 / 100 = 10 > bulk: 0 / 25
    expect(fair.choose([bulk, live('a', 5)], (c) => c)?.lane).toBe('bulk');
  });

  it("counts a reserved (queued) push at its group's mean push time, so several choices in a row spread out", () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    fair.observe([live('a'), live('b')]);
    const reservation = fair.reserve(live('a'));
    expect(fair.choose([live('a', 0), live('b', 5)], (c) => c)?.remote).toBe('b');
    reservation.cancel();
    expect(fair.choose([live('a', 0), live('b', 5)], (c) => c)?.remote).toBe('a');
  });

  it('places a group that becomes active at the lowest key of the active ones, not at its decayed usage', () => {
    const clock = new FakeClock();
    const fair = new FairShare(clock, () => settings);
    fair.observe([live('a')]);
    const stop = fair.begin(live('a'));
    clock.advance(600_000);
    stop();
    fair.observe([live('a'), live('newcomer')]);
    const placed = usageOf(fair, 'live/newcomer')!;
    expect(placed).toBeCloseTo(usageOf(fair, 'live/a')!, -1);
  });
});
