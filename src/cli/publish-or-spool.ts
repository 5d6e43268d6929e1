import { formatDuration } from '../config/duration.js';
import { StoreError } from '../errors.js';
import { errnoName } from '../runtime/errno.js';
import type { Timers } from '../runtime/timers.js';
import { StoreLayoutError, StoreMissingError } from '../store/store-marker.js';

/**
 * Store failures that a local spool bridges: the store is not there (marker missing: not
 * mounted), cannot take a write now (full, over quota, read-only, I/O error, stale NFS
 * handle), or is of the previous layout (between installing this refrelay and
 * `refrelay init --upgrade`, the daemons being stopped: the first one started after the upgrade
 * forwards what hooks spooled meanwhile). Anything else — a permission error, a damaged marker —
 * is a mistake the operator has to see, and spooling would only hide it.
 */
const SPOOLED_ERRNOS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'ESTALE']);

/** Why this failure of a store write is spooled, for the warning; undefined when it is not. Pure. */
export function spoolReasonOf(error: unknown): string | undefined {
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 8; depth++) {
    if (at instanceof StoreMissingError) return at.detail;
    if (at instanceof StoreLayoutError) return `it has layout ${at.format}, until \`refrelay init --upgrade\` has run`;
    const code = errnoName(at);
    if (code !== undefined && SPOOLED_ERRNOS.has(code)) return code;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

export type PublishOutcome<T> =
  { readonly kind: 'stored'; readonly result: T } | { readonly kind: 'spooled'; readonly reason: string; readonly spoolDir: string };

export interface PublishOrSpoolOptions<T> {
  readonly storePath: string;
  readonly publish: () => Promise<T>;
  /** Writes the tasks to the local spool; resolves with its folder. */
  readonly spool: () => Promise<string>;
  readonly spoolAfterMs: number;
  readonly timers: Pick<Timers, 'after'>;
}

/**
 * Publishes to the store; when the store fails in a way `spoolReasonOf` accepts, or has not
 * answered within `spoolAfterMs` (a hung NFS mount must not hold the developer's push), the
 * update is spooled instead. A store write that finishes after the timer makes a second copy of
 * the same task, which the store keeps as one by its taskKey. Only when the spool fails too does
 * this throw, naming both errors.
 */
export async function publishOrSpool<T>(options: PublishOrSpoolOptions<T>): Promise<PublishOutcome<T>> {
  let cancelTimer = (): void => undefined;
  const timedOut = new Promise<{ timedOut: true }>((resolve) => {
    cancelTimer = options.timers.after(options.spoolAfterMs, () => resolve({ timedOut: true }));
  });
  const publishing = options.publish();
  let reason: string;
  let storeFailure: unknown;
  try {
    const first = await Promise.race([publishing.then((result) => ({ timedOut: false as const, result })), timedOut]);
    if (!first.timedOut) return { kind: 'stored', result: first.result };
    // Still running: its outcome no longer matters, and an unhandled rejection must not crash the exit.
    publishing.catch(() => undefined);
    reason = `no answer within ${formatDuration(options.spoolAfterMs)}`;
    storeFailure = new StoreError(`the store at ${options.storePath} did not answer within ${formatDuration(options.spoolAfterMs)}`);
  } catch (error) {
    const spoolable = spoolReasonOf(error);
    if (spoolable === undefined) throw error;
    reason = spoolable;
    storeFailure = error;
  } finally {
    cancelTimer();
  }
  let spoolDir: string;
  try {
    spoolDir = await options.spool();
  } catch (spoolError) {
    const storeText = storeFailure instanceof Error ? storeFailure.message : String(storeFailure);
    const spoolText = spoolError instanceof Error ? spoolError.message : String(spoolError);
    throw new StoreError(`${storeText}; and the update could not be spooled locally either: ${spoolText}`, { cause: spoolError });
  }
  return { kind: 'spooled', reason, spoolDir };
}

/** The one line `enqueue` prints on stderr when it spooled. */
export function spooledWarning(storePath: string, reason: string, spoolDir: string): string {
  return (
    `refrelay: the store at ${storePath} cannot be written (${reason}); ` +
    `the update is spooled in ${spoolDir} and will be forwarded by a daemon of this store on this machine\n`
  );
}
