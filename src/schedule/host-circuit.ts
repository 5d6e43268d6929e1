import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import { retryDelayMs } from './backoff.js';

/** Connection-level failures of this many different URIs on one host… */
export const CIRCUIT_TRIP_URIS = 5;
/** …within this long open the host's circuit. */
export const CIRCUIT_WINDOW_MS = 60_000;

export type CircuitGate = 'closed' | 'probe' | 'blocked';

export interface HostCircuitView {
  readonly host: string;
  readonly state: 'closed' | 'open' | 'half-open';
  /** Different URIs that failed at connection level within the window (closed circuits). */
  readonly recentFailures: number;
  /** How many times in a row the circuit opened (its backoff exponent). */
  readonly trips: number;
  /** Local time of the next probe while open. */
  readonly nextProbeAt: number | null;
  readonly lastError: string | null;
}

interface HostState {
  /** uriKey → local time of its last connection-level failure, while closed. */
  readonly failures: Map<string, number>;
  open?: { trips: number; nextProbeAt: number; probeUriKey?: string; baseMs: number };
  lastError?: string;
}

/**
 * Per destination host: when at least 5 different URIs of the host fail at connection level
 * within 60 s, the host is taken out of scheduling, so 1,000 URIs of a dead host do not each
 * probe it on their own schedule. After a backoff (the URI formula, keyed by the host) one push
 * goes through as a probe; a push that reaches the host closes the circuit, a failed probe doubles
 * the wait. While the circuit is open its URIs do not spend their own retries.
 *
 * Node-local, like the overload window: each node finds out for itself, and a node that cannot
 * reach a host it shares with peers should not stop them.
 */
export class HostCircuits {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly clock: Clock,
    private readonly random: Random,
  ) {}

  /** May a URI of `host` start now: freely, as the one probe, or not at all. */
  gate(host: string): CircuitGate {
    const open = this.hosts.get(host)?.open;
    if (open === undefined) return 'closed';
    if (open.probeUriKey !== undefined || this.clock.now() < open.nextProbeAt) return 'blocked';
    return 'probe';
  }

  /** Closed, or `uriKey` is its probe. */
  mayPush(host: string, uriKey: string): boolean {
    const open = this.hosts.get(host)?.open;
    return open === undefined || open.probeUriKey === uriKey;
  }

  /** The URI started as the probe of an open circuit; no other probe until it ends. */
  beginProbe(host: string, uriKey: string): void {
    const open = this.hosts.get(host)?.open;
    if (open !== undefined) open.probeUriKey = uriKey;
  }

  /** The probe ended without reaching the host either way (lock taken, nothing to push, stopped). */
  probeAbandoned(host: string, uriKey: string): void {
    const open = this.hosts.get(host)?.open;
    if (open?.probeUriKey === uriKey) delete open.probeUriKey;
  }

  /** A push reached the host (whatever git then said): the circuit closes. */
  reached(host: string): void {
    this.hosts.delete(host);
  }

  /**
   * A push of `uriKey` could not connect. Returns true when the circuit is open (it may have just
   * opened): the failure is the host's, and the URI's own retry count must not grow.
   */
  connectionFailed(host: string, uriKey: string, baseMs: number, message: string): boolean {
    const now = this.clock.now();
    let state = this.hosts.get(host);
    if (state === undefined) this.hosts.set(host, (state = { failures: new Map() }));
    state.lastError = message;
    if (state.open !== undefined) {
      if (state.open.probeUriKey === uriKey) {
        const trips = state.open.trips + 1;
        state.open = { trips, nextProbeAt: now + retryDelayMs(baseMs, trips, this.random), baseMs };
      }
      return true;
    }
    state.failures.set(uriKey, now);
    for (const [key, at] of state.failures) if (now - at > CIRCUIT_WINDOW_MS) state.failures.delete(key);
    if (state.failures.size < CIRCUIT_TRIP_URIS) return false;
    state.failures.clear();
    state.open = { trips: 1, nextProbeAt: now + retryDelayMs(baseMs, 1, this.random), baseMs };
    return true;
  }

  /** Whether any host's circuit is open: while none is, no URL needs to be parsed for its host. */
  anyOpen(): boolean {
    for (const state of this.hosts.values()) if (state.open !== undefined) return true;
    return false;
  }

  view(): HostCircuitView[] {
    return [...this.hosts].map(([host, state]) => ({
      host,
      state: state.open === undefined ? 'closed' : state.open.probeUriKey !== undefined ? 'half-open' : 'open',
      recentFailures: state.failures.size,
      trips: state.open?.trips ?? 0,
      nextProbeAt: state.open?.nextProbeAt ?? null,
      lastError: state.lastError ?? null,
    }));
  }
}
