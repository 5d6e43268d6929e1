import { describe, expect, it } from 'vitest';
import { simulate } from './simulation.js';

const TWO_HOURS = 2 * 60 * 60 * 1000;

/** Shares rounded to one decimal, for readable failure messages. */
function rounded(shares: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(shares).map(([name, share]) => [name, Math.round(share * 10) / 10]));
}

describe('fair share between remotes (2 simulated hours, 5 s mean pushes)', () => {
  it('gives three remotes with 100:10:1 backlogs and equal shares a third of one slot each', async () => {
    const result = await simulate({ remotes: [{ name: 'a', backlog: 100 }, { name: 'b', backlog: 10 }, { name: 'c', backlog: 1 }], maxPushes: 1, durationMs: TWO_HOURS, seed: 1 });
    const shares = rounded(result.pushTimeShares());
    for (const name of ['a', 'b', 'c']) expect(shares[name], JSON.stringify(shares)).toBeGreaterThanOrEqual(100 / 3 - 2);
    for (const name of ['a', 'b', 'c']) expect(shares[name], JSON.stringify(shares)).toBeLessThanOrEqual(100 / 3 + 2);
  });

  it('on 10 slots gives 45/45/10: the remote with one URI can hold one slot, the others split the rest', async () => {
    const result = await simulate({ remotes: [{ name: 'a', backlog: 100 }, { name: 'b', backlog: 10 }, { name: 'c', backlog: 1 }], maxPushes: 10, durationMs: TWO_HOURS, seed: 2 });
    const shares = rounded(result.pushTimeShares());
    expect(Math.abs(shares.a! - 45), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.b! - 45), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.c! - 10), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('keeps a third each when one backlog is 10,000 URIs (usage is per remote, not per URI)', { timeout: 180_000 }, async () => {
    const result = await simulate({ remotes: [{ name: 'a', backlog: 10_000 }, { name: 'b', backlog: 10 }, { name: 'c', backlog: 1 }], maxPushes: 1, durationMs: TWO_HOURS, seed: 3 });
    const shares = rounded(result.pushTimeShares());
    for (const name of ['a', 'b', 'c']) expect(Math.abs(shares[name]! - 100 / 3), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('follows shares 300/100/100 on one slot: 60/20/20', async () => {
    const result = await simulate({ remotes: [{ name: 'a', backlog: 50, shares: 300 }, { name: 'b', backlog: 50 }, { name: 'c', backlog: 50 }], maxPushes: 1, durationMs: TWO_HOURS, seed: 4 });
    const shares = rounded(result.pushTimeShares());
    expect(Math.abs(shares.a! - 60), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.b! - 20), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.c! - 20), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('never starves a remote with 1 share against 1000 and 100', async () => {
    const result = await simulate({ remotes: [{ name: 'big', backlog: 50, shares: 1000 }, { name: 'mid', backlog: 50, shares: 100 }, { name: 'tiny', backlog: 50, shares: 1 }], maxPushes: 1, durationMs: TWO_HOURS, seed: 5 });
    const shares = result.pushTimeShares();
    expect(shares.tiny).toBeGreaterThan(0);
    expect(shares.tiny).toBeLessThan(2);
    expect(result.dispatches.some((d) => d.remote === 'tiny')).toBe(true);
  });

  it('places a late remote at the current minimum: incumbents keep flowing and the newcomer takes no more than its share', async () => {
    const hour = 60 * 60 * 1000;
    const tenMinutes = 10 * 60 * 1000;
    const result = await simulate({
      remotes: [{ name: 'a', backlog: 100 }, { name: 'b', backlog: 100 }, { name: 'c', backlog: 100, joinsAtMs: hour }],
      maxPushes: 10,
      durationMs: TWO_HOURS,
      seed: 6,
    });
    for (const incumbent of ['a', 'b']) {
      const before = result.longestGapMs(incumbent, hour - tenMinutes, hour);
      const after = result.longestGapMs(incumbent, hour, hour + tenMinutes);
      expect(after, `${incumbent}: longest gap ${after} ms after the arrival, ${before} ms before`).toBeLessThanOrEqual(2 * before);
    }
    const shares = rounded(result.dispatchShares(hour, hour + tenMinutes));
    expect(shares.c, JSON.stringify(shares)).toBeLessThanOrEqual(40);
    expect(shares.c, JSON.stringify(shares)).toBeGreaterThan(20);
  });
});

describe('lanes', () => {
  it('lets bulk work (full syncs) keep a fifth of the pushes against a saturating live backlog, at 25 shares to 100', async () => {
    const result = await simulate({ remotes: [{ name: 'live', backlog: 100 }, { name: 'bulk', backlog: 2000, lane: 'bulk' }], maxPushes: 4, durationMs: TWO_HOURS, seed: 7 });
    const shares = rounded(result.pushTimeShares());
    expect(Math.abs(shares.bulk! - 20), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('starts a fresh live push at the next free slot while a replicate-all fills every slot', async () => {
    const minute = 60_000;
    const result = await simulate({
      remotes: [{ name: 'bulk', backlog: 10_000, lane: 'bulk' }, { name: 'dev', backlog: 1, joinsAtMs: 30 * minute, finite: true }],
      maxPushes: 4,
      durationMs: 40 * minute, // the live push is the point here: 30 minutes of replicate-all before it
      seed: 8,
    });
    const live = result.dispatches.find((d) => d.remote === 'dev');
    expect(live).toBeDefined();
    // Four slots of 5 s mean pushes free one about every 1.25 s; the live push takes the next one.
    const firstBulkEndAfterJoin = Math.min(...result.dispatches.filter((d) => d.remote === 'bulk' && d.endsAt >= 30 * minute).map((d) => d.endsAt));
    expect(live!.startedAt).toBeLessThanOrEqual(firstBulkEndAfterJoin);
  });
});
