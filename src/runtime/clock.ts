/** Time reaches the core only through this interface, so tests can drive it. */
export interface Clock {
  /** Wall-clock epoch milliseconds. */
  now(): number;
  /** Monotonic milliseconds, for measuring elapsed time. */
  monotonic(): number;
}

export const systemClock: Clock = { now: () => Date.now(), monotonic: () => performance.now() };

/** A wall clock shifted by a fixed offset: lets tests run nodes whose clocks disagree. */
export function offsetClock(base: Clock, offsetMs: number): Clock {
  if (offsetMs === 0) return base;
  return { now: () => base.now() + offsetMs, monotonic: () => base.monotonic() };
}
