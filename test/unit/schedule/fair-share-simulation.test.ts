import { describe, expect, it } from 'vitest';
import { simulate } from './simulation.js';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const TWO_HOURS = 2 * HOUR;
/** Offsets every seed: a different value checks that no claim holds only for the seeds below. */
const SEED = Number(process.env.FAIR_SHARE_SEED ?? 0);

/** Shares rounded to one decimal, for readable failure messages. */
function rounded(shares: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(shares).map(([name, share]) => [name, Math.round(share * 10) / 10]));
}

describe('fair share between remotes (simulated hours, 5 s mean pushes)', () => {
  it('gives three remotes with 100:10:1 backlogs and equal shares a third of one slot each', async () => {
    const result = await simulate({
      remotes: [
        { name: 'a', backlog: 100 },
        { name: 'b', backlog: 10 },
        { name: 'c', backlog: 1 },
      ],
      maxPushes: 1,
      durationMs: HOUR,
      seed: SEED + 1,
    });
    const shares = rounded(result.pushTimeShares());
    for (const name of ['a', 'b', 'c']) expect(shares[name], JSON.stringify(shares)).toBeGreaterThanOrEqual(100 / 3 - 2);
    for (const name of ['a', 'b', 'c']) expect(shares[name], JSON.stringify(shares)).toBeLessThanOrEqual(100 / 3 + 2);
  });

  it('on 10 slots gives 45/45/10: the remote with one URI can hold one slot, the others split the rest', async () => {
    // a and b each have more due URIs than slots, so each could fill all ten alone.
    const result = await simulate({
      remotes: [
        { name: 'a', backlog: 30 },
        { name: 'b', backlog: 12 },
        { name: 'c', backlog: 1 },
      ],
      maxPushes: 10,
      durationMs: 30 * MINUTE,
      seed: SEED + 2,
    });
    const shares = rounded(result.pushTimeShares());
    expect(Math.abs(shares.a! - 45), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.b! - 45), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.c! - 10), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('keeps a third each when one backlog is 500 URIs against 10 and 1 (usage is per remote, not per URI)', async () => {
    // Shared per URI, a would take 500/511 of the slot.
    const result = await simulate({
      remotes: [
        { name: 'a', backlog: 500 },
        { name: 'b', backlog: 10 },
        { name: 'c', backlog: 1 },
      ],
      maxPushes: 1,
      durationMs: HOUR,
      seed: SEED + 3,
    });
    const shares = rounded(result.pushTimeShares());
    for (const name of ['a', 'b', 'c']) expect(Math.abs(shares[name]! - 100 / 3), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('follows shares 300/100/100 on one slot: 60/20/20', async () => {
    const result = await simulate({
      remotes: [
        { name: 'a', backlog: 5, shares: 300 },
        { name: 'b', backlog: 5 },
        { name: 'c', backlog: 5 },
      ],
      maxPushes: 1,
      durationMs: HOUR,
      seed: SEED + 4,
    });
    const shares = rounded(result.pushTimeShares());
    expect(Math.abs(shares.a! - 60), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.b! - 20), JSON.stringify(shares)).toBeLessThanOrEqual(2);
    expect(Math.abs(shares.c! - 20), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('never starves a remote with 1 share against 1000 and 100', async () => {
    // 1/1101 of two hours is about one 5 s push: the tiny remote must get it, and not much more.
    const result = await simulate({
      remotes: [
        { name: 'big', backlog: 5, shares: 1000 },
        { name: 'mid', backlog: 5, shares: 100 },
        { name: 'tiny', backlog: 5, shares: 1 },
      ],
      maxPushes: 1,
      durationMs: TWO_HOURS,
      seed: SEED + 5,
    });
    const shares = result.pushTimeShares();
    expect(shares.tiny).toBeGreaterThan(0);
    expect(shares.tiny).toBeLessThan(2);
    expect(result.dispatches.some((d) => d.remote === 'tiny')).toBe(true);
  });

  it('places a late remote at the current minimum: incumbents keep flowing and the newcomer takes no more than its share', async () => {
    const joinsAt = 15 * MINUTE;
    const tenMinutes = 10 * MINUTE;
    // Each backlog is three times the slots: any one remote could fill them all.
    const result = await simulate({
      remotes: [
        { name: 'a', backlog: 30 },
        { name: 'b', backlog: 30 },
        { name: 'c', backlog: 30, joinsAtMs: joinsAt },
      ],
      maxPushes: 10,
      durationMs: joinsAt + tenMinutes,
      seed: SEED + 6,
    });
    for (const incumbent of ['a', 'b']) {
      const before = result.longestGapMs(incumbent, joinsAt - tenMinutes, joinsAt);
      const after = result.longestGapMs(incumbent, joinsAt, joinsAt + tenMinutes);
      expect(after, `${incumbent}: longest gap ${after} ms after the arrival, ${before} ms before`).toBeLessThanOrEqual(2 * before);
    }
    const shares = rounded(result.dispatchShares(joinsAt, joinsAt + tenMinutes));
    expect(shares.c, JSON.stringify(shares)).toBeLessThanOrEqual(40);
    expect(shares.c, JSON.stringify(shares)).toBeGreaterThan(20);
  });
});

describe('lanes', () => {
  it('lets bulk work (full syncs) keep a fifth of the pushes against a saturating live backlog, at 25 shares to 100', async () => {
    const result = await simulate({
      remotes: [
        { name: 'live', backlog: 20 },
        { name: 'bulk', backlog: 200, lane: 'bulk' },
      ],
      maxPushes: 4,
      durationMs: HOUR,
      seed: SEED + 7,
    });
    const shares = rounded(result.pushTimeShares());
    expect(Math.abs(shares.bulk! - 20), JSON.stringify(shares)).toBeLessThanOrEqual(2);
  });

  it('starts a fresh live push at the next free slot while a replicate-all fills every slot', async () => {
    const minute = MINUTE;
    const joinsAt = 15 * minute;
    const result = await simulate({
      remotes: [
        { name: 'bulk', backlog: 500, lane: 'bulk' },
        { name: 'dev', backlog: 1, joinsAtMs: joinsAt, finite: true },
      ],
      maxPushes: 4,
      durationMs: joinsAt + 5 * minute, // the live push is the point here: three half-lives of replicate-all usage before it
      seed: SEED + 8,
    });
    const live = result.dispatches.find((d) => d.remote === 'dev');
    expect(live).toBeDefined();
    // Four slots of 5 s mean pushes free one about every 1.25 s; the live push takes the next one.
    const firstBulkEndAfterJoin = Math.min(...result.dispatches.filter((d) => d.remote === 'bulk' && d.endsAt >= joinsAt).map((d) => d.endsAt));
    expect(live!.startedAt).toBeLessThanOrEqual(firstBulkEndAfterJoin);
  });
});
