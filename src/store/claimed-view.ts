import { join } from 'node:path';
import type { StoreContext } from './store-context.js';
import { OWNER_RECORD_NAME } from './store-paths.js';

/**
 * How long after its last write an owner record in a waiting folder still means "a claim took this
 * folder". An NFS client trusts a cached lookup for at most `acdirmax` (60 s by default on Linux)
 * after it last asked, which was before the claim; a held lease's record is rewritten at every
 * heartbeat and a retired one was written at its claim or after. Five minutes leaves room for
 * raised cache times and clock offset; a record older than that (or as far in the future) is a
 * file a person left, and costs its URI's updates at most that long a detour.
 */
export const CLAIMED_VIEW_MAX_AGE_MS = 5 * 60_000;

/**
 * Whether `waiting/<folder>`, as this client resolves the name, is a folder a claim took away: a
 * lease folder under running/ or one retired to done/ (DESIGN.md "Waiting folders", Stale lookups).
 * A waiting folder never holds an owner record, but an NFS client that looked the folder up before
 * another machine's claim renamed it goes on resolving the name to that folder while it trusts its
 * cache: a link or rename through the name lands among claimed tasks, and EEXIST there says
 * nothing about what waits. Nothing is read: the record's type and mtime say enough, and a check
 * that fails (the move it follows succeeded) counts as no record.
 */
export async function seenAsClaimed(ctx: StoreContext, folder: string): Promise<boolean> {
  let stats;
  try {
    stats = await ctx.fs.lstat(join(ctx.paths.waitingFolder(folder), OWNER_RECORD_NAME));
  } catch {
    return false;
  }
  return stats.isFile() && Math.abs(ctx.clock.now() - stats.mtimeMs) <= CLAIMED_VIEW_MAX_AGE_MS;
}
