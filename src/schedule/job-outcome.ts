import { FAILURE_POLICY, retryLimit, type FailureKind } from '../push/failure-policy.js';

/** What one git push of a job (one remote and project of the URI) came to. */
export interface UnitResult {
  /** Its claimed task files. */
  readonly names: readonly string[];
  /** Why the push failed as a whole, or why its refused refs make the URI back off. */
  readonly failure?: { readonly kind: FailureKind; readonly message: string };
  /** The host's circuit or pacing took the failure as the host's: it spends no attempt of the URI. */
  readonly heldByHost?: boolean;
  /** Refs the destination refused for now, to be pushed again without a backoff. */
  readonly refusedForNow?: number;
}

/** After the moves: the URI's retry state and the job's result. `host-down`: every retried failure was the host's; the tasks wait (in `requeue`), attempts unchanged. */
export type JobVerdict =
  | { readonly kind: 'settled' | 'aborted' }
  | { readonly kind: 'host-down'; readonly reason: string; readonly overloaded: boolean }
  | { readonly kind: 'retry' | 'give-up'; readonly names: readonly string[]; readonly reason: string; readonly attempts: number };

export interface JobDecision<U extends UnitResult = UnitResult> {
  /** Units pushed: retired with the lease. */
  readonly finish: readonly U[];
  /** Back to waiting/ as they are, the retry state untouched. */
  readonly requeue: readonly string[];
  /** Units whose tasks go to failed/ now. */
  readonly fail: readonly U[];
  readonly verdict: JobVerdict;
}

/**
 * The one reading of a job's push results, in push order. A failure that is not retryable fails
 * its unit's tasks at once; a stopped push requeues them. Retryable failures make the URI back off
 * with one more attempt (the last failure's message is recorded), unless every one of them was
 * held by the host, or the attempts now exceed the limit of the last failure's kind (give up).
 */
export function decideJobOutcome<U extends UnitResult>(
  units: readonly U[],
  retries: { readonly attempts: number; readonly maxRetries: number },
): JobDecision<U> {
  const finish: U[] = [];
  const requeue: string[] = [];
  const fail: U[] = [];
  const again: string[] = [];
  let last: UnitResult['failure'];
  let heldByHost = true;
  let overloaded = false;
  let aborted = false;
  for (const unit of units) {
    const rule = unit.failure === undefined ? undefined : FAILURE_POLICY[unit.failure.kind];
    if (rule === undefined && unit.refusedForNow) requeue.push(...unit.names);
    else if (rule === undefined) finish.push(unit);
    else if (!rule.countsAgainstRetries) {
      aborted = true;
      requeue.push(...unit.names);
    } else if (!rule.retryable) fail.push(unit);
    else {
      again.push(...unit.names);
      last = unit.failure;
      heldByHost &&= unit.heldByHost === true;
      overloaded ||= rule.host === 'overloaded';
    }
  }
  if (last === undefined) return { finish, requeue, fail, verdict: { kind: aborted ? 'aborted' : 'settled' } };
  if (heldByHost) return { finish, requeue: [...requeue, ...again], fail, verdict: { kind: 'host-down', reason: last.message, overloaded } };
  const attempts = retries.attempts + 1;
  const limit = retryLimit(last.kind, retries.maxRetries);
  return { finish, requeue, fail, verdict: { kind: limit > 0 && attempts > limit ? 'give-up' : 'retry', names: again, reason: last.message, attempts } };
}
