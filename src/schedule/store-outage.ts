import { StoreError } from '../errors.js';
import { LogThrottle } from '../runtime/log-throttle.js';
import type { Clock } from '../runtime/clock.js';
import { errnoName } from '../runtime/errno.js';

/** What a store that cannot take writes answers; anything else is a bug or a lost race, logged as before. */
const STORE_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']);

/** Failure lines of one kind: the first at once, then at most one a minute with the count left out. */
export const STORE_FAILURE_LOG_EVERY_MS = 60_000;

/**
 * The errno that makes `error` a failure of the store itself (full, read-only, I/O error), found
 * through its `cause` chain; a StoreError without one of those is a store failure too (its own
 * errno, or STORE). Undefined for everything else.
 */
export function storeFailureCode(error: unknown): string | undefined {
  let isStore = false;
  let first: string | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    if (current instanceof StoreError) isStore = true;
    else {
      const code = errnoName(current);
      if (code !== undefined && STORE_ERRNOS.has(code)) return code;
      first ??= code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return isStore ? (first ?? 'STORE') : undefined;
}

/** How long a node waits before its next store write after `failures` store failures in a row: intervalMs / 8, doubling, at most intervalMs. */
export function storeRetryDelayMs(failures: number, intervalMs: number): number {
  if (failures <= 0) return 0;
  return Math.min(intervalMs, (intervalMs / 8) * 2 ** (failures - 1));
}

/** Where a store failure was met: a push job, a distributor pass, the node heartbeat. */
export type StoreFailureSource = 'push' | 'pass' | 'heartbeat';

export interface StoreFailureView {
  readonly code: string;
  /** Wall clock of this node when the first failure of the outage was seen. */
  readonly sinceAt: number;
  /** Store failures in a row since then. */
  readonly failures: number;
  readonly lastError: string;
}

/**
 * This node's view of a failing store, per node rather than per URI: a full store fails every
 * URI's job alike. While failing, job starts back off (storeRetryDelayMs, from a fraction of
 * distributionInterval up to it) and each start is one probe at a time; failure lines are rate
 * limited per message (LogThrottle). The outage ends with the next successful write (a job that
 * took its lock, a node heartbeat).
 */
export class StoreOutage {
  private readonly failing = new Map<StoreFailureSource, { code: string; sinceAt: number; lastError: string }>();
  private failures = 0;
  /** Failed jobs in a row: what the start backoff grows with. */
  private jobFailures = 0;
  private retryAt = Number.NEGATIVE_INFINITY;
  private probing = false;
  private readonly throttle = new LogThrottle(STORE_FAILURE_LOG_EVERY_MS);

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs: () => number,
  ) {}

  /**
   * Record `error` met by `source`. Undefined when it is not a store failure (the caller logs it
   * as always); else its errno, whether to log the line `message` now, how many such lines were
   * left out before, and when the next job may start.
   */
  failed(
    source: StoreFailureSource,
    error: unknown,
    message: string,
    code = storeFailureCode(error),
  ): { code: string; log: boolean; suppressed: number; retryInMs: number } | undefined {
    if (code === undefined) return undefined;
    const now = this.clock.monotonic();
    const text = error instanceof Error ? error.message : String(error);
    const since = this.failing.get(source)?.sinceAt ?? this.view()?.sinceAt ?? this.clock.now();
    this.failing.set(source, { code, sinceAt: since, lastError: text });
    this.failures++;
    // Only failed jobs move the next start: the node heartbeat fails once per interval whatever
    // happens, and would otherwise keep pushing the probe out for good.
    if (source === 'push') this.retryAt = now + storeRetryDelayMs(++this.jobFailures, this.intervalMs());
    const retryInMs = Math.max(0, this.retryAt - now);
    return { code, ...this.throttle.take(message, now), retryInMs };
  }

  /**
   * `source` worked again; true when that ended the outage. A pass mostly reads, so its success
   * clears only its own failures. A job that took its lock or a node heartbeat wrote a file: the
   * store takes writes, and the outage is over. (Waiting for each place that failed to succeed
   * would keep a node that runs no job failing forever.)
   */
  succeeded(source: StoreFailureSource): boolean {
    if (!this.failing.delete(source)) return false;
    if (source !== 'pass') this.failing.clear();
    if (this.failing.size > 0) return false;
    this.failures = 0;
    this.jobFailures = 0;
    this.retryAt = Number.NEGATIVE_INFINITY;
    return true;
  }

  get isFailing(): boolean {
    return this.failing.size > 0;
  }

  /** May a push job start now? Always while the store works; during an outage one probe at a time, after the backoff. */
  mayStart(): boolean {
    if (!this.isFailing) return true;
    return !this.probing && this.clock.monotonic() >= this.retryAt;
  }

  /** A job started: during an outage it is the probe, and no other starts until it ends. */
  started(): void {
    if (this.isFailing) this.probing = true;
  }

  /** A job ended, whatever its result (its success or failure is reported separately). */
  ended(): void {
    this.probing = false;
  }

  /** The outage as seen by all sources (or all but `except`, e.g. the one writing the view), or undefined. */
  view(except?: StoreFailureSource): StoreFailureView | undefined {
    let view: StoreFailureView | undefined;
    for (const [source, entry] of this.failing) {
      if (source === except) continue;
      if (view === undefined || entry.sinceAt < view.sinceAt)
        view = { code: entry.code, sinceAt: entry.sinceAt, failures: this.failures, lastError: entry.lastError };
    }
    return view;
  }
}
