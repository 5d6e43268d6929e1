import { redactText, redactUrl } from '../runtime/redact.js';
import { parseUriState } from '../schedule/uri-state.js';
import type { TaskStore } from '../store/task-store.js';

/** A destination URI that failed and waits for its next attempt, as its retry state says. */
export interface BackoffStatus {
  uriKey: string;
  /** Redacted. */
  uri: string;
  attempts: number;
  /** The last failure, redacted, one line. */
  lastError: string;
  /** Until the next attempt is allowed, store clock; 0 when it is due now. */
  nextAttemptInMs: number;
  /** The node that wrote the state (the last one to try). */
  nodeId: string;
}

/** An error text from the store for a person: its first line, at most 300 characters, credentials hidden. */
export function errorLine(text: string): string {
  return redactText(text.split('\n')[0]!.slice(0, 300));
}

/** Retry states read by one status: a destination down for long may leave one per URI. */
export const BACKOFFS_READ = 1000;

/**
 * The URIs with a retry state in `uri-state/` (every node's failures, as the lock holders wrote
 * them), soonest next attempt first. The files are untrusted: one that does not parse as a state
 * is left out, its error text redacted and cut to one line.
 */
export function backoffsOf(states: ReadonlyArray<{ readonly uriKey: string; readonly state: unknown }>, storeNow: number): BackoffStatus[] {
  return states
    .flatMap(({ uriKey, state }) => {
      const parsed = parseUriState(state);
      if (parsed === undefined || parsed.attempts === 0) return [];
      return [
        {
          uriKey,
          uri: redactUrl(parsed.uri),
          attempts: parsed.attempts,
          lastError: errorLine(parsed.lastError),
          nextAttemptInMs: Math.max(0, Math.round(parsed.notBefore - storeNow)),
          nodeId: parsed.nodeId.slice(0, 100),
        },
      ];
    })
    .sort((a, b) => a.nextAttemptInMs - b.nextAttemptInMs || a.uri.localeCompare(b.uri));
}

/** The backoffs of at most BACKOFFS_READ retry states, and how many states were left unread. */
export async function readBackoffs(store: Pick<TaskStore, 'listUriStates'>, storeNow: number): Promise<{ uris: BackoffStatus[]; unread: number }> {
  const { states, unread } = await store.listUriStates(BACKOFFS_READ);
  return { uris: backoffsOf(states, storeNow), unread };
}
