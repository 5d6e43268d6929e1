import type { Clock } from '../../src/runtime/clock.js';
import type { Random } from '../../src/runtime/random.js';
import type { Timers } from '../../src/runtime/timers.js';

/** A clock that moves only when the test says so. */
export class FakeClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  monotonic(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** Deterministic randomness: a fixed value, or a seeded sequence (mulberry32). */
export class SeededRandom implements Random {
  private state: number;
  private tokens = 0;
  constructor(
    seed = 1,
    private readonly fixed?: number,
  ) {
    this.state = seed >>> 0;
  }
  next(): number {
    if (this.fixed !== undefined) return this.fixed;
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  token(): string {
    return `t${(this.tokens++).toString(16).padStart(6, '0')}`;
  }
}

/** Timers that never fire on their own; heartbeats are not what these tests are about. */
export const inertTimers: Timers = { every: () => () => undefined, after: () => () => undefined };

/** Timers that fire as a FakeClock is advanced through them (`advance`), in due order. */
export class FakeTimers implements Timers {
  private readonly pending: Array<{ at: number; every?: number; action: () => void; cancelled: boolean }> = [];

  constructor(private readonly clock: FakeClock) {}

  every(intervalMs: number, action: () => void): () => void {
    const timer = { at: this.clock.monotonic() + intervalMs, every: intervalMs, action, cancelled: false };
    this.pending.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  after(delayMs: number, action: () => void): () => void {
    const timer = { at: this.clock.monotonic() + delayMs, action, cancelled: false };
    this.pending.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** Move the clock `ms` ahead, firing each timer at its time; `between` runs after each firing (to let promises settle). */
  async advance(ms: number, between: () => Promise<void> = async () => undefined): Promise<void> {
    const end = this.clock.monotonic() + ms;
    for (;;) {
      const live = this.pending.filter((timer) => !timer.cancelled && timer.at <= end);
      if (live.length === 0) break;
      const next = live.reduce((a, b) => (b.at < a.at ? b : a));
      this.clock.advance(next.at - this.clock.monotonic());
      if (next.every === undefined) next.cancelled = true;
      else next.at += next.every;
      next.action();
      await between();
    }
    this.clock.advance(end - this.clock.monotonic());
  }
}
