import type { Log } from '../runtime/log.js';
import type { StoreFailureView, StoreOutage } from '../schedule/store-outage.js';
import { plural } from '../runtime/plural.js';

/**
 * The daemon's side of a failing store: its failed passes and node heartbeats feed the node's
 * StoreOutage (which backs job starts off) and are logged at most once a minute per message, with
 * the count left out; anything that is not a store failure is logged every time, as before.
 */
export function reportPassFailure(outage: StoreOutage, log: Log, error: unknown): void {
  const err = error instanceof Error ? error.message : String(error);
  const store = outage.failed('pass', error, 'distributor pass failed');
  if (store === undefined) log.error({ err }, 'distributor pass failed');
  else if (store.log) log.error({ err, code: store.code, suppressed: store.suppressed }, 'distributor pass failed');
}

/** Spooled tasks that could not go into the store: a store failure is throttled like a failed pass. */
export function reportSpoolFailure(outage: StoreOutage, log: Log, error: unknown, spooled: number): void {
  const err = error instanceof Error ? error.message : String(error);
  const store = outage.failed('pass', error, 'could not forward spooled tasks into the store');
  if (store === undefined) log.warn({ err, spooled }, 'could not forward spooled tasks into the store');
  else if (store.log) log.warn({ err, spooled, code: store.code, suppressed: store.suppressed }, 'could not forward spooled tasks into the store');
}

export function reportHeartbeatFailure(outage: StoreOutage, log: Log, error: unknown): void {
  const err = error instanceof Error ? error.message : String(error);
  const store = outage.failed('heartbeat', error, 'node heartbeat write failed');
  if (store === undefined) log.warn({ err }, 'node heartbeat write failed');
  else if (store.log) log.warn({ err, code: store.code, suppressed: store.suppressed }, 'node heartbeat write failed');
}

/** A place that failed has written again; logs when that ended the node's store outage. */
export function reportStoreWorks(outage: StoreOutage, log: Log, source: 'pass' | 'heartbeat'): void {
  if (outage.succeeded(source)) log.info({}, 'the store works again');
}

/** The /healthz reason for a failing store: errno and since when (this node's clock). */
export function storeHealthReason(view: StoreFailureView | undefined): string | undefined {
  if (view === undefined) return undefined;
  return `store not writable (${view.code}) since ${new Date(view.sinceAt).toISOString()}, ${plural(view.failures, 'failure')} in a row: ${view.lastError}`;
}
