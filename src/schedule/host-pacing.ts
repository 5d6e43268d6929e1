import type { Clock } from '../runtime/clock.js';

/** Signals closer together than this count once: a burst of 429s is one overload. */
export const OVERLOAD_SENSITIVITY_MS = 500;
const BASE_SPACING_MS = 250;
const MAX_SPACING_MS = 60_000;
const IDLE_DECAY_AFTER_MS = 5000;

interface Pace {
  /** Concurrent pushes allowed to the host. */
  window: number;
  /** Where the window climbs back to before the host is left alone again. */
  readonly ceiling: number;
  /** Minimum time between two push starts to the host. */
  spacingMs: number;
  /** No push starts before this (local time): the server's Retry-After. */
  notBefore: number;
  lastUpdate: number;
  lastStart: number;
  successes: number;
}

export interface HostPaceView {
  readonly host: string;
  readonly window: number;
  readonly spacingMs: number;
  readonly retryAfterMs: number | null;
}

/**
 * AIMD per destination host, node-local (like TCP, each node adapts on its own): an overload
 * signal (HTTP 429/503 from smart-http, ssh connections dropped during key exchange as
 * `MaxStartups` does) halves the pushes this node runs at once to that host (not below 1) and
 * spaces their starts out (×1.5 from 250 ms, at most 60 s); a `Retry-After` holds every start
 * until it has passed. Each success adds back: the window grows by one per window's worth of
 * successes in a row, the spacing shrinks by a step (more after idle time), and a host back at
 * full width with no spacing is forgotten. Hosts that never signalled overload are not limited.
 */
export class HostPacing {
  private readonly hosts = new Map<string, Pace>();

  constructor(private readonly clock: Clock) {}

  any(): boolean {
    return this.hosts.size > 0;
  }

  /** May one more push to `host` start now, with `running` already running to it? */
  allows(host: string, running: number): boolean {
    const pace = this.hosts.get(host);
    if (pace === undefined) return true;
    const now = this.clock.now();
    return running < pace.window && now >= pace.notBefore && now - pace.lastStart >= pace.spacingMs;
  }

  started(host: string): void {
    const pace = this.hosts.get(host);
    if (pace !== undefined) pace.lastStart = this.clock.now();
  }

  /** `running`: pushes to the host in flight when the signal came (the width that overloaded it). */
  overloaded(host: string, running: number, retryAfterMs?: number): void {
    const now = this.clock.now();
    let pace = this.hosts.get(host);
    if (pace === undefined) {
      const width = Math.max(1, running);
      pace = { window: width, ceiling: width, spacingMs: 0, notBefore: 0, lastUpdate: -Infinity, lastStart: 0, successes: 0 };
      this.hosts.set(host, pace);
    }
    if (retryAfterMs !== undefined && retryAfterMs > 0) pace.notBefore = Math.max(pace.notBefore, now + retryAfterMs);
    if (now - pace.lastUpdate < OVERLOAD_SENSITIVITY_MS) return;
    pace.lastUpdate = now;
    pace.successes = 0;
    pace.window = Math.max(1, Math.floor(pace.window / 2));
    pace.spacingMs = Math.min(MAX_SPACING_MS, Math.max(pace.spacingMs, BASE_SPACING_MS) * 1.5);
    if (retryAfterMs !== undefined) pace.spacingMs = Math.min(MAX_SPACING_MS, Math.max(pace.spacingMs, retryAfterMs));
  }

  succeeded(host: string): void {
    const pace = this.hosts.get(host);
    if (pace === undefined) return;
    const now = this.clock.now();
    const idle = now - pace.lastUpdate;
    if (idle > IDLE_DECAY_AFTER_MS) pace.spacingMs -= 2 * (idle - IDLE_DECAY_AFTER_MS);
    pace.spacingMs -= pace.spacingMs <= 2500 ? 250 : pace.spacingMs <= 10_000 ? 1000 : 5000;
    if (pace.spacingMs < 0) pace.spacingMs = 0;
    pace.lastUpdate = now;
    if (++pace.successes >= pace.window) {
      pace.successes = 0;
      pace.window = Math.min(pace.ceiling, pace.window + 1);
    }
    if (pace.window >= pace.ceiling && pace.spacingMs === 0 && now >= pace.notBefore) this.hosts.delete(host);
  }

  view(): HostPaceView[] {
    const now = this.clock.now();
    return [...this.hosts].map(([host, pace]) => ({
      host,
      window: pace.window,
      spacingMs: Math.round(pace.spacingMs),
      retryAfterMs: pace.notBefore > now ? pace.notBefore - now : null,
    }));
  }
}
