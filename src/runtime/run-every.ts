import type { Clock } from './clock.js';

/**
 * A periodic activity of a loop that works in passes: each call of the returned function runs
 * `action` when `intervalMs()` has passed on the monotonic clock since it last ran, and the first
 * call runs it at once. The pass calls it, so activities keep the pass's order and never overlap,
 * and a fake clock drives them. The interval is read at each call: a reloaded config applies.
 */
export function runEvery(clock: Clock, intervalMs: () => number, action: () => Promise<void>): () => Promise<void> {
  let lastAt = Number.NEGATIVE_INFINITY;
  return async () => {
    const now = clock.monotonic();
    if (now - lastAt < intervalMs()) return;
    lastAt = now;
    await action();
  };
}
