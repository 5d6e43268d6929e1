/** What one push job came to, for the distributor, `--drain` and the logs. */
/**
 * `failedRefs`: rejected refs parked in failed/, one task file each. `refusedForNow`: refs the
 * destination refused for a passing-looking reason while taking others; their tasks wait again. `failedTasks` (present only
 * when not 0): claimed tasks of another push unit of the same URI that failed for good meanwhile.
 */
export type JobResult =
  | { readonly kind: 'pushed'; readonly claimed: number; readonly failedRefs: number; readonly failedTasks?: number; readonly refusedForNow?: number }
  | { readonly kind: 'retry'; readonly notBefore: number; readonly attempts: number; readonly failedTasks?: number }
  | { readonly kind: 'failed'; readonly claimed: number }
  | { readonly kind: 'backoff'; readonly notBefore: number }
  /** The host's circuit is open: the tasks wait, the URI's retry count unchanged. */
  | { readonly kind: 'host-down'; readonly failedTasks?: number }
  | { readonly kind: 'locked' }
  | { readonly kind: 'nothing-claimed'; readonly failedTasks?: number }
  | { readonly kind: 'aborted'; readonly failedTasks?: number }
  | { readonly kind: 'lock-lost' }
  /** Stopped by its own heartbeat: the lock's record could not be written (`error`, the last failure) for lockStale / 2. */
  | { readonly kind: 'stalled'; readonly error: unknown; readonly failedTasks?: number };

/** How many task files a job put in failed/: what `daemon --drain` exits 1 for. */
export function movedToFailed(result: JobResult): number {
  if (result.kind === 'failed') return result.claimed;
  const failedTasks = 'failedTasks' in result ? (result.failedTasks ?? 0) : 0;
  return result.kind === 'pushed' ? result.failedRefs + failedTasks : failedTasks;
}
