import { join } from 'node:path';
import type { StoreContext } from './store-context.js';
import { removeQuietly } from './store-fs.js';
import { isGone } from '../runtime/errno.js';
import { CORRUPT_REASON_SUFFIX } from './store-paths.js';
import { replaceAtomic } from './publish.js';

/**
 * Moves an unreadable entry to `corrupt/<name>.<token>` with a `.reason` record next to
 * it. Never deletes (the data may be worth recovering by hand) and never throws: a bad
 * file must not stop a pass.
 *
 * The reason is written first, under this attempt's own token, and the entry moves only once
 * its reason is in place: in a full store the reason cannot be written, so the entry stays
 * where it was (refused again on every pass) rather than landing in corrupt/ unexplained. When
 * several nodes find the same bad file, each writes a reason, one rename wins and the others
 * remove theirs. A crash between the two steps leaves a `.reason` with no entry, which
 * listings skip.
 * Returns true when this call moved the entry.
 */
export async function quarantine(ctx: StoreContext, path: string, name: string, reason: string): Promise<boolean> {
  const stem = `${name}.${ctx.random.token()}`;
  const movedTo = join(ctx.paths.corrupt, stem);
  const reasonPath = `${movedTo}${CORRUPT_REASON_SUFFIX}`;
  const record = { reason, quarantinedAt: ctx.clock.now(), nodeId: ctx.nodeId, originalPath: path, movedTo };
  try {
    await replaceAtomic(ctx, reasonPath, `${JSON.stringify(record)}\n`, `${stem}${CORRUPT_REASON_SUFFIX}`, 'write quarantine reason');
  } catch (error) {
    ctx.onEvent({ type: 'quarantine-failed', path, reason, error });
    return false;
  }
  try {
    await ctx.fs.rename(path, movedTo);
  } catch (error) {
    await removeQuietly(ctx.fs, reasonPath);
    if (!isGone(error)) ctx.onEvent({ type: 'quarantine-failed', path, reason, error });
    return false;
  }
  ctx.onEvent({ type: 'quarantined', path, movedTo, reason });
  return true;
}
