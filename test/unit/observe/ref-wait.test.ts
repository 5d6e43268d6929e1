import { describe, expect, it } from 'vitest';
import {
  applyConfirmation,
  beginConfirmation,
  describeFollowed,
  followDestination,
  needsConfirmation,
  observe,
  verdict,
  type FollowedDestination,
} from '../../../src/observe/ref-wait.js';
import type { StoreProgress } from '../../../src/observe/wait-progress.js';

const WANTED = 'a'.repeat(40);
const OLD = 'b'.repeat(40);
const REF = 'refs/heads/main';

function progress(over: Partial<StoreProgress> = {}): StoreProgress {
  return { waiting: 0, running: false, backoff: undefined, failed: undefined, lastResultAt: 0, ...over };
}

function seen(over: Partial<StoreProgress> = {}): FollowedDestination {
  const followed = followDestination();
  observe(followed, progress(over));
  return followed;
}

function confirmed(answer: { value: string | null } | { error: string }, over: Partial<StoreProgress> = {}): FollowedDestination {
  const followed = seen(over);
  beginConfirmation(followed);
  applyConfirmation(followed, answer, WANTED);
  return followed;
}

describe('when a destination is asked', () => {
  it('is asked once the store has no work for it, never while it has', () => {
    expect(needsConfirmation(seen())).toBe(true);
    expect(needsConfirmation(seen({ waiting: 2 }))).toBe(false);
    expect(needsConfirmation(seen({ running: true }))).toBe(false);
    expect(needsConfirmation(followDestination())).toBe(false);
  });

  it('is not asked again while nothing happened in the store since it lagged', () => {
    const followed = confirmed({ value: OLD }, { lastResultAt: 100 });
    observe(followed, progress({ lastResultAt: 100 }));
    expect(needsConfirmation(followed)).toBe(false);
  });

  it('is asked again after the store showed work for it, once that work is done', () => {
    const followed = confirmed({ value: OLD });
    observe(followed, progress({ waiting: 1 }));
    expect(needsConfirmation(followed)).toBe(false);
    observe(followed, progress());
    expect(needsConfirmation(followed)).toBe(true);
  });

  it('is asked again after a push result newer than the last question, though no work was ever seen', () => {
    const followed = confirmed({ value: OLD }, { lastResultAt: 100 });
    observe(followed, progress({ lastResultAt: 250 }));
    expect(needsConfirmation(followed)).toBe(true);
  });

  it('is never asked again once it holds the value', () => {
    const followed = confirmed({ value: WANTED });
    observe(followed, progress({ lastResultAt: 999 }));
    expect(needsConfirmation(followed)).toBe(false);
  });
});

describe('what a person is told of a destination', () => {
  it('names the state and the reason, the last error of a backoff included', () => {
    expect(describeFollowed(confirmed({ value: WANTED }), REF)).toEqual({ state: 'replicated', detail: 'has refs/heads/main' });
    expect(describeFollowed(seen({ running: true, waiting: 1 }), REF).state).toBe('pushing');
    expect(describeFollowed(seen({ waiting: 3 }), REF)).toEqual({ state: 'waiting', detail: '3 tasks waiting' });
    const backoff = { uriKey: 'k', uri: 'git://h/p.git', attempts: 4, lastError: 'Connection refused', nextAttemptInMs: 12_000, nodeId: 'n1' };
    expect(describeFollowed(seen({ waiting: 1, backoff }), REF)).toEqual({
      state: 'backing-off',
      detail: '1 task waiting, backing off after attempt 4, next attempt in 12s: Connection refused',
    });
    expect(describeFollowed(confirmed({ value: OLD }, { failed: 'non-fast-forward' }), REF)).toEqual({
      state: 'failed',
      detail: 'has refs/heads/main at bbbbbbbbbbbb; a task of it is in failed/: non-fast-forward',
    });
    expect(describeFollowed(confirmed({ value: null }), REF)).toEqual({ state: 'lagging', detail: 'has no refs/heads/main, and no task of it is waiting' });
    expect(describeFollowed(confirmed({ error: 'fatal: no route' }), REF)).toEqual({
      state: 'unreachable',
      detail: 'cannot be reached to confirm: fatal: no route',
    });
  });
});

describe('how the wait ends', () => {
  const open = { timedOut: false, masterHasValue: true };

  it('exits 0 only when every destination holds the value', () => {
    expect(verdict([confirmed({ value: WANTED }), confirmed({ value: WANTED })], open)).toBe(0);
    expect(verdict([confirmed({ value: WANTED }), seen({ waiting: 1 })], open)).toBeUndefined();
  });

  it('goes on while a lagging destination may still get the value (the update may not be queued yet)', () => {
    expect(verdict([confirmed({ value: OLD })], open)).toBeUndefined();
  });

  it('ends early with 1 when a lagging destination has its task in failed/ and the master holds the value', () => {
    expect(verdict([confirmed({ value: OLD }, { failed: 'rejected' })], open)).toBe(1);
    expect(verdict([confirmed({ value: OLD }, { failed: 'rejected' })], { ...open, masterHasValue: false })).toBeUndefined();
  });

  it('ends early with 4 when a destination with no work left cannot be asked', () => {
    expect(verdict([confirmed({ value: WANTED }), confirmed({ error: 'refused' })], open)).toBe(4);
    expect(verdict([confirmed({ error: 'refused' }, { waiting: 1 })], open)).toBeUndefined();
  });

  it('at the timeout: 1 when any destination lags or has work left, else 4', () => {
    const timedOut = { timedOut: true, masterHasValue: true };
    expect(verdict([seen({ waiting: 1 }), confirmed({ error: 'refused' })], timedOut)).toBe(1);
    expect(verdict([confirmed({ value: OLD })], timedOut)).toBe(1);
    expect(verdict([confirmed({ error: 'refused' })], timedOut)).toBe(4);
    expect(verdict([confirmed({ value: WANTED })], timedOut)).toBe(0);
  });
});
