import { describe, expect, it } from 'vitest';
import { countRefusals, MAX_TRACKED_REFS, parseRefRejections } from '../../../src/schedule/ref-rejections.js';

const LOCK = '[remote rejected] (failed to update ref)';

describe('countRefusals: consecutive refusals of a ref, with the same reason', () => {
  it('parks a ref on the limit-th refusal in a row with the same reason, and retries it before', () => {
    const first = countRefusals(undefined, [{ ref: 'refs/heads/stuck', reason: LOCK }], ['refs/heads/main'], 3);
    expect(first).toMatchObject({ park: [], retry: [{ ref: 'refs/heads/stuck' }], next: { 'refs/heads/stuck': { reason: LOCK, count: 1 } } });
    const second = countRefusals(first.next, [{ ref: 'refs/heads/stuck', reason: LOCK }], ['refs/heads/main'], 3);
    expect(second.next).toEqual({ 'refs/heads/stuck': { reason: LOCK, count: 2 } });
    const third = countRefusals(second.next, [{ ref: 'refs/heads/stuck', reason: LOCK }], ['refs/heads/main'], 3);
    expect(third.park).toEqual([{ ref: 'refs/heads/stuck', reason: LOCK, count: 3 }]);
    expect(third.retry).toEqual([]);
    expect(third.next).toEqual({});
  });

  it('starts the count again when the reason changes, and ends the run when the ref lands', () => {
    const previous = { 'refs/heads/stuck': { reason: LOCK, count: 2 } };
    expect(countRefusals(previous, [{ ref: 'refs/heads/stuck', reason: '[remote rejected] (cannot lock ref)' }], [], 3).next).toEqual({
      'refs/heads/stuck': { reason: '[remote rejected] (cannot lock ref)', count: 1 },
    });
    expect(countRefusals(previous, [], ['refs/heads/stuck'], 3).next).toEqual({});
  });

  it('keeps the runs of refs this push did not carry', () => {
    const previous = { 'refs/heads/other': { reason: LOCK, count: 1 } };
    expect(countRefusals(previous, [{ ref: 'refs/heads/stuck', reason: LOCK }], ['refs/heads/main'], 3).next).toEqual({
      'refs/heads/stuck': { reason: LOCK, count: 1 },
      'refs/heads/other': { reason: LOCK, count: 1 },
    });
  });

  it('with a limit of 1 parks at the first refusal', () => {
    expect(countRefusals(undefined, [{ ref: 'refs/heads/stuck', reason: LOCK }], [], 1).park).toEqual([{ ref: 'refs/heads/stuck', reason: LOCK, count: 1 }]);
  });

  it('counts at most MAX_TRACKED_REFS refs and names the rest untracked, so none is retried without a bound', () => {
    const refused = Array.from({ length: MAX_TRACKED_REFS + 5 }, (_, i) => ({ ref: `refs/heads/r${i}`, reason: LOCK }));
    const counted = countRefusals(undefined, refused, [], 3);
    expect(Object.keys(counted.next)).toHaveLength(MAX_TRACKED_REFS);
    expect(counted.untracked.map((r) => r.ref)).toEqual(refused.slice(MAX_TRACKED_REFS).map((r) => r.ref));
  });

  it('bounds the remembered reason, and still counts it as the same reason the next time', () => {
    const long = `[remote rejected] (${'x'.repeat(1000)})`;
    const first = countRefusals(undefined, [{ ref: 'refs/heads/stuck', reason: long }], [], 2);
    expect(first.next['refs/heads/stuck']!.reason.length).toBeLessThanOrEqual(200);
    expect(countRefusals(first.next, [{ ref: 'refs/heads/stuck', reason: long }], [], 2).park).toEqual([{ ref: 'refs/heads/stuck', reason: long, count: 2 }]);
  });
});

describe('parseRefRejections: the map as read from an untrusted store', () => {
  it('keeps well-formed entries and drops the rest', () => {
    expect(
      parseRefRejections({
        'refs/heads/a': { reason: LOCK, count: 2 },
        'refs/heads/b': { reason: LOCK, count: -1 },
        'refs/heads/c': { reason: 7, count: 1 },
        'refs/heads/d': { reason: LOCK, count: 1.5 },
        'refs/heads/e': null,
      }),
    ).toEqual({ 'refs/heads/a': { reason: LOCK, count: 2 } });
  });

  it('is absent for anything that is not a map, or a map with nothing usable', () => {
    for (const value of [undefined, null, 3, 'x', [], [{ reason: LOCK, count: 1 }], {}, { a: 1 }]) expect(parseRefRejections(value)).toBeUndefined();
  });

  it('reads at most MAX_TRACKED_REFS entries', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_TRACKED_REFS * 3 }, (_, i) => [`refs/heads/r${i}`, { reason: LOCK, count: 1 }]));
    expect(Object.keys(parseRefRejections(many)!)).toHaveLength(MAX_TRACKED_REFS);
  });
});
