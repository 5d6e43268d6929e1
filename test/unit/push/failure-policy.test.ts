import { describe, expect, it } from 'vitest';
import { classifyPushFailure, pushFailure } from '../../../src/push/failure-class.js';
import { FAILURE_POLICY, retryLimit, type FailureKind, type FailureRule } from '../../../src/push/failure-policy.js';

/**
 * What each kind meant before the table: retryable from the pusher's old RETRYABLE map; the host
 * effect from the push job (reached unless aborted, overloaded, or a connection-level message);
 * aborted pushes requeued without spending a retry; auth given up after 3 attempts.
 */
const EXPECTED: Readonly<Record<FailureKind, FailureRule>> = {
  transient: { retryable: true, countsAgainstRetries: true, host: 'reached' },
  unreachable: { retryable: true, countsAgainstRetries: true, host: 'connection-failed' },
  overloaded: { retryable: true, countsAgainstRetries: true, host: 'overloaded' },
  'missing-repository': { retryable: true, countsAgainstRetries: true, host: 'reached' },
  auth: { retryable: true, countsAgainstRetries: true, host: 'reached', permanentAfter: 3 },
  timeout: { retryable: true, countsAgainstRetries: true, host: 'reached' },
  permanent: { retryable: false, countsAgainstRetries: true, host: 'reached' },
  'local-missing': { retryable: false, countsAgainstRetries: true, host: 'reached' },
  aborted: { retryable: false, countsAgainstRetries: false, host: 'none' },
};

describe('the failure policy table', () => {
  it('has one entry for every kind, and no other', () => {
    expect(Object.keys(FAILURE_POLICY).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.keys(EXPECTED) as FailureKind[])('%s: retryable, retry spending, host effect and limit as before', (kind) => {
    expect({ ...FAILURE_POLICY[kind] }).toEqual(EXPECTED[kind]);
    expect(pushFailure(kind, 'm', '').retryable).toBe(EXPECTED[kind].retryable);
  });

  it('gives auth at most 3 attempts, fewer when maxRetries says so, and other kinds maxRetries (0 = no limit)', () => {
    expect([retryLimit('auth', 0), retryLimit('auth', 2), retryLimit('auth', 10)]).toEqual([3, 2, 3]);
    expect([retryLimit('transient', 0), retryLimit('unreachable', 7), retryLimit('timeout', 10)]).toEqual([0, 7, 10]);
  });

  it.each([
    ['ssh: connect to host h port 22: Connection refused', 'connection-failed'],
    ['fatal: unable to look up nonexistent.invalid (port 9418) (Name or service not known)', 'connection-failed'],
    ['kex_exchange_identification: Connection closed by remote host', 'overloaded'],
    ["fatal: unable to access 'https://h/r.git/': The requested URL returned error: 503", 'overloaded'],
    ["fatal: unable to access 'https://h/r.git/': The requested URL returned error: 500", 'reached'],
    ['fatal: the remote end hung up unexpectedly', 'reached'],
    ['Permission denied (publickey).', 'reached'],
  ])('reads the host effect of %s from the kind the classifier gives: %s', (stderr, host) => {
    expect(FAILURE_POLICY[classifyPushFailure(128, stderr).kind].host).toBe(host);
  });
});
