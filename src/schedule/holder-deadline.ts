/**
 * Whether a lock holder must stop its push because its heartbeat has not been written for too
 * long. Observers take a lock over once its counter stood still for lockStale on their own
 * monotonic clocks, counted at the earliest from when the last counter change could have become
 * visible: the start of the holder's last successful record write. Stopping at half of that
 * leaves the other half for killing git and putting the tasks back before anyone may judge the
 * lock stale; stopping later would let a peer's push overlap ours.
 */
export function holderMustStop(lastWriteStartedAt: number, now: number, lockStaleMs: number): boolean {
  return now - lastWriteStartedAt >= lockStaleMs / 2;
}
