import { parseRefRejections, type RefRejections } from './ref-rejections.js';

/**
 * Retry state of one destination URI, persisted in `uri-state/<uriKey>.json` by the lock holder,
 * so backoff and max-retries hold across nodes and restarts.
 */
export interface UriState {
  readonly uri: string;
  readonly attempts: number;
  readonly lastError: string;
  /** Epoch ms before which no node pushes this URI. */
  readonly notBefore: number;
  readonly updatedAt: number;
  readonly nodeId: string;
  /** Refs the destination refused in a row while taking others (see ref-rejections.ts); absent when none. */
  readonly refRejections?: RefRejections;
}

/**
 * The store is input from anyone who can write it: a state file that is not plainly ours (a
 * fractional, negative or unsafe attempt count, a notBefore that is not a finite number) is no
 * state at all, a fresh start, rather than something that could wedge or crash the scheduler.
 */
export function parseUriState(value: unknown): UriState | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const fields = value as Record<string, unknown>;
  const { attempts, notBefore } = fields;
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts) || attempts < 0) return undefined;
  if (typeof notBefore !== 'number' || !Number.isFinite(notBefore)) return undefined;
  return {
    uri: typeof fields.uri === 'string' ? fields.uri : '',
    attempts,
    lastError: typeof fields.lastError === 'string' ? fields.lastError : '',
    notBefore,
    updatedAt: typeof fields.updatedAt === 'number' && Number.isFinite(fields.updatedAt) ? fields.updatedAt : 0,
    nodeId: typeof fields.nodeId === 'string' ? fields.nodeId : '',
    ...optionalRefRejections(fields.refRejections),
  };
}

/**
 * No node ever writes a notBefore more than `capMs` after its own now (see retryDelayMs), so a
 * later one is a hand-edited or damaged file, or a writer whose clock ran far ahead: it counts
 * as `now + capMs` of the reading node. Returns `state` itself when it is within the cap.
 */
export function capNotBefore(state: UriState, now: number, capMs: number): UriState {
  const latest = now + capMs;
  return state.notBefore > latest ? { ...state, notBefore: latest } : state;
}

function optionalRefRejections(value: unknown): { refRejections?: RefRejections } {
  const parsed = parseRefRejections(value);
  return parsed === undefined ? {} : { refRejections: parsed };
}
