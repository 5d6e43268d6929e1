import { join } from 'node:path';
import type { StoreContext } from './store-context.js';
import { isGone } from './store-fs.js';
import { CORRUPT_REASON_SUFFIX } from './store-paths.js';
import { replaceAtomic } from './publish.js';

/**
 * Moves an unreadable entry to `corrupt/<name>.<token>` with a `.reason` record next to
 * it. Never deletes (the data may be worth recovering by hand) and never throws: a bad
 * file must not stop a pass. The rename comes first, so when several nodes find the same
 * bad file only the one that moved it writes a reason.
 * Returns true when this call moved the entry.
 */
export async function quarantine(ctx: StoreContext, path: string, name: string, reason: string): Promise<boolean> {
  const stem = `${name}.${ctx.random.token()}`;
  const movedTo = join(ctx.paths.corrupt, stem);
  try {
    await ctx.fs.rename(path, movedTo);
  } catch (error) {
    if (!isGone(error)) ctx.onEvent({ type: 'quarantine-failed', path, reason, error });
    return false;
  }
  const record = { reason, quarantinedAt: ctx.clock.now(), nodeId: ctx.nodeId, originalPath: path, movedTo };
  try {
    await replaceAtomic(ctx, `${movedTo}${CORRUPT_REASON_SUFFIX}`, `${JSON.stringify(record)}\n`, `${stem}${CORRUPT_REASON_SUFFIX}`, 'write quarantine reason');
  } catch (error) {
    // The entry is out of the way, which is what matters; the event still carries the reason.
    ctx.onEvent({ type: 'quarantine-failed', path: movedTo, reason, error });
  }
  ctx.onEvent({ type: 'quarantined', path, movedTo, reason });
  return true;
}
