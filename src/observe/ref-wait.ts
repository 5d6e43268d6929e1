import { formatWait } from './time-text.js';
import type { StoreProgress } from './wait-progress.js';
import { plural } from '../runtime/plural.js';

/** A destination's ref value from `ls-remote` (null: no such ref), or why it could not be read. */
export type Confirmation = { readonly value: string | null } | { readonly error: string };

/**
 * One destination as `refrelay wait` follows it (DESIGN.md "Waiting for a ref"). The store tells
 * progress; the destination itself is asked only when the store has no work left for it and has
 * shown a push since it was last asked (or it was never asked), so a wait never polls a
 * destination in a loop.
 */
export interface FollowedDestination {
  /** The last answer of the destination itself. */
  phase: 'unconfirmed' | 'replicated' | 'lagging' | 'unreachable';
  /** Its value of the ref at the last confirmation (lagging). */
  has: string | null;
  /** Why the last confirmation failed (unreachable). */
  error: string;
  progress: StoreProgress | undefined;
  /** The store's newest push result of the URI when the last confirmation began. */
  resultAtConfirm: number;
  /** The store showed work for the URI after the last confirmation began. */
  workSinceConfirm: boolean;
}

export function followDestination(): FollowedDestination {
  return { phase: 'unconfirmed', has: null, error: '', progress: undefined, resultAtConfirm: 0, workSinceConfirm: false };
}

function hasWork(progress: StoreProgress | undefined): boolean {
  return progress !== undefined && (progress.waiting > 0 || progress.running);
}

export function observe(followed: FollowedDestination, progress: StoreProgress): void {
  followed.progress = progress;
  if (hasWork(progress)) followed.workSinceConfirm = true;
}

/** The store has no work left for it, and something may have changed since it was last asked. */
export function needsConfirmation(followed: FollowedDestination): boolean {
  const progress = followed.progress;
  if (followed.phase === 'replicated' || progress === undefined || hasWork(progress)) return false;
  return followed.phase === 'unconfirmed' || followed.workSinceConfirm || progress.lastResultAt > followed.resultAtConfirm;
}

/** Call as the `ls-remote` starts: a push that ends while it runs is then seen as new. */
export function beginConfirmation(followed: FollowedDestination): void {
  followed.resultAtConfirm = followed.progress?.lastResultAt ?? 0;
  followed.workSinceConfirm = false;
}

export function applyConfirmation(followed: FollowedDestination, answer: Confirmation, wanted: string): void {
  if ('error' in answer) {
    followed.phase = 'unreachable';
    followed.error = answer.error;
  } else {
    followed.phase = answer.value === wanted ? 'replicated' : 'lagging';
    followed.has = answer.value;
  }
}

export type ShownState = 'replicated' | 'pushing' | 'backing-off' | 'waiting' | 'failed' | 'lagging' | 'unreachable' | 'unconfirmed';

/** What to tell a person (and `--json`) about one destination: a state and why. */
export function describeFollowed(followed: FollowedDestination, ref: string): { state: ShownState; detail: string } {
  const progress = followed.progress;
  if (followed.phase === 'replicated') return { state: 'replicated', detail: `has ${ref}` };
  if (progress?.running === true) return { state: 'pushing', detail: 'a node is pushing it' };
  if (progress !== undefined && progress.waiting > 0) {
    const tasks = `${plural(progress.waiting, 'task')} waiting`;
    const backoff = progress.backoff;
    if (backoff === undefined) return { state: 'waiting', detail: tasks };
    return {
      state: 'backing-off',
      detail: `${tasks}, backing off after attempt ${backoff.attempts}, next attempt ${formatWait(backoff.nextAttemptInMs)}: ${backoff.lastError}`,
    };
  }
  if (followed.phase === 'unreachable') return { state: 'unreachable', detail: `cannot be reached to confirm: ${followed.error}` };
  if (followed.phase === 'unconfirmed') return { state: 'unconfirmed', detail: 'not asked yet' };
  const has = followed.has === null ? `has no ${ref}` : `has ${ref} at ${followed.has.slice(0, 12)}`;
  if (progress?.failed !== undefined) return { state: 'failed', detail: `${has}; a task of it is in failed/: ${progress.failed}` };
  return { state: 'lagging', detail: `${has}, and no task of it is waiting` };
}

/**
 * How the wait ends, or undefined while it goes on. Every destination holding the value: 0.
 * Before the timeout it ends early only when nothing more can happen without an operator: no
 * destination has work in the store, and each that lags either has its task in failed/ while
 * the master already holds the value (1), or cannot be reached (4). At the timeout: 1 when any
 * destination lags, else 4 for those that could not be asked.
 */
export function verdict(followed: readonly FollowedDestination[], options: { timedOut: boolean; masterHasValue: boolean }): 0 | 1 | 4 | undefined {
  const open = followed.filter((item) => item.phase !== 'replicated');
  if (open.length === 0) return 0;
  const cannotAsk = (item: FollowedDestination): boolean => item.phase === 'unreachable' && !hasWork(item.progress);
  const lagging = open.filter((item) => !cannotAsk(item));
  if (options.timedOut) return lagging.length > 0 ? 1 : 4;
  if (open.some((item) => hasWork(item.progress) || needsConfirmation(item))) return undefined;
  const stuck = (item: FollowedDestination): boolean => item.phase === 'lagging' && item.progress?.failed !== undefined && options.masterHasValue;
  if (!lagging.every(stuck)) return undefined;
  return lagging.length > 0 ? 1 : 4;
}
