import { describe, expect, it } from 'vitest';
import { decideJobOutcome, type UnitResult } from '../../../src/schedule/job-outcome.js';

const retries = { attempts: 0, maxRetries: 5 };
const landed = (name: string): UnitResult => ({ names: [name] });
const failed = (name: string, kind: NonNullable<UnitResult['failure']>['kind'], extra: Partial<UnitResult> = {}): UnitResult => ({
  names: [name],
  failure: { kind, message: `${name}: ${kind}` },
  ...extra,
});

describe('decideJobOutcome', () => {
  it('finishes the units that landed and settles the URI', () => {
    const decision = decideJobOutcome([landed('a'), landed('b')], retries);
    expect(decision).toEqual({ finish: [landed('a'), landed('b')], requeue: [], fail: [], verdict: { kind: 'settled' } });
  });

  it('requeues a unit with refs refused for now, without a backoff', () => {
    const decision = decideJobOutcome([landed('a'), { names: ['b'], refusedForNow: 2 }], retries);
    expect(decision).toMatchObject({ finish: [landed('a')], requeue: ['b'], verdict: { kind: 'settled' } });
  });

  it('fails a permanent unit at once while the others land', () => {
    const decision = decideJobOutcome([landed('a'), failed('b', 'local-missing')], retries);
    expect(decision).toMatchObject({ finish: [landed('a')], fail: [failed('b', 'local-missing')], verdict: { kind: 'settled' } });
  });

  it('requeues a stopped push and reports the job aborted', () => {
    expect(decideJobOutcome([failed('a', 'aborted'), landed('b')], retries)).toMatchObject({
      requeue: ['a'],
      finish: [landed('b')],
      verdict: { kind: 'aborted' },
    });
  });

  it('backs the URI off with one more attempt and the last retryable failure as its reason; a retry wins over an abort', () => {
    const decision = decideJobOutcome([failed('a', 'transient'), failed('b', 'aborted'), failed('c', 'timeout')], { attempts: 2, maxRetries: 5 });
    expect(decision).toMatchObject({ requeue: ['b'], verdict: { kind: 'retry', names: ['a', 'c'], reason: 'c: timeout', attempts: 3 } });
  });

  it('gives up once the attempts exceed maxRetries, and auth after 3 whatever maxRetries allows', () => {
    expect(decideJobOutcome([failed('a', 'transient')], { attempts: 5, maxRetries: 5 }).verdict).toMatchObject({ kind: 'give-up', names: ['a'], attempts: 6 });
    expect(decideJobOutcome([failed('a', 'transient')], { attempts: 50, maxRetries: 0 }).verdict).toMatchObject({ kind: 'retry', attempts: 51 });
    expect(decideJobOutcome([failed('a', 'auth')], { attempts: 2, maxRetries: 10 }).verdict).toMatchObject({ kind: 'retry', attempts: 3 });
    expect(decideJobOutcome([failed('a', 'auth')], { attempts: 3, maxRetries: 10 }).verdict).toMatchObject({ kind: 'give-up', attempts: 4 });
  });

  it('spends no attempt when the host took every retried failure, and says whether it was overload', () => {
    const down = decideJobOutcome([failed('a', 'unreachable', { heldByHost: true }), landed('b')], retries);
    expect(down).toMatchObject({ requeue: ['a'], finish: [landed('b')], verdict: { kind: 'host-down', reason: 'a: unreachable', overloaded: false } });
    const busy = decideJobOutcome([failed('a', 'overloaded', { heldByHost: true })], retries);
    expect(busy.verdict).toMatchObject({ kind: 'host-down', overloaded: true });
  });

  it("spends an attempt when any retried failure was not the host's", () => {
    const decision = decideJobOutcome([failed('a', 'unreachable', { heldByHost: true }), failed('b', 'transient')], retries);
    expect(decision).toMatchObject({ requeue: [], verdict: { kind: 'retry', names: ['a', 'b'], attempts: 1 } });
  });
});
