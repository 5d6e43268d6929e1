/**
 * Why a push failed, as the pusher reports it (`failure-class.ts` reads git's stderr):
 * - `transient`: the host answered, the push may go through later (hung up, 5xx, a ref it could not lock).
 * - `unreachable`: the host could not be reached at all (refused, no route, no DNS).
 * - `overloaded`: the host turns work away for now (HTTP 429/503, ssh dropped during key exchange).
 * - `missing-repository`, `auth`: a person (or repository creation) may fix it meanwhile.
 * - `permanent`, `local-missing`: nothing changes by waiting.
 * - `timeout`: stopped by the remote's idle limit or deadline; `aborted`: stopped by this node.
 */
export type FailureKind = 'transient' | 'unreachable' | 'overloaded' | 'missing-repository' | 'auth' | 'permanent' | 'local-missing' | 'timeout' | 'aborted';

/** What a failure says about its host: reached (circuit closes), could not connect (circuit counts it), or busy (pacing slows down). */
export type HostEffect = 'reached' | 'connection-failed' | 'overloaded' | 'none';

export interface FailureRule {
  /** The tasks wait for another push; otherwise they go to failed/ now (or, not counted, simply wait again). */
  readonly retryable: boolean;
  /** The push spends one of the URI's attempts, unless the host's circuit or pacing takes the failure as the host's. */
  readonly countsAgainstRetries: boolean;
  readonly host: HostEffect;
  /** Failed for good once the URI's attempts exceed this many, whatever `replication.maxRetries` allows. */
  readonly permanentAfter?: number;
}

const RETRY: FailureRule = { retryable: true, countsAgainstRetries: true, host: 'reached' };
const FAIL: FailureRule = { retryable: false, countsAgainstRetries: true, host: 'reached' };

/** The one place a failure kind is given its consequences. */
export const FAILURE_POLICY: Readonly<Record<FailureKind, FailureRule>> = {
  transient: RETRY,
  unreachable: { ...RETRY, host: 'connection-failed' },
  overloaded: { ...RETRY, host: 'overloaded' },
  'missing-repository': RETRY,
  // A key may be rotated meanwhile: retried a few times, then given up.
  auth: { ...RETRY, permanentAfter: 3 },
  timeout: RETRY,
  permanent: FAIL,
  // Never touched the destination; counted as reached as it always was, so a probe ends the circuit's wait.
  'local-missing': FAIL,
  // Stopped by this node (shutdown, lock lost): says nothing about the destination, and costs nothing.
  aborted: { retryable: false, countsAgainstRetries: false, host: 'none' },
};

/** How many attempts a URI failing with `kind` gets: the remote's `maxRetries` (0 = no limit), capped by the kind's own. */
export function retryLimit(kind: FailureKind, maxRetries: number): number {
  const cap = FAILURE_POLICY[kind].permanentAfter;
  return cap === undefined ? maxRetries : Math.min(maxRetries || cap, cap);
}
