import { mapBounded } from '../runtime/map-bounded.js';
import type { StoreContext } from './store-context.js';
import { readdirStrict } from './store-listing.js';
import { URI_KEY_PATTERN } from './store-paths.js';
import { readJsonTolerant } from './task-reader.js';

const STATE_SUFFIX = '.json';

/** The URI keys with a retry state file: one `readdir` of `uri-state/`, no reads. */
export async function listUriStateKeys(ctx: StoreContext): Promise<string[]> {
  const names = await readdirStrict(ctx, ctx.paths.uriState, 'list uri states');
  const keys: string[] = [];
  for (const name of names) {
    // Only `<uriKey>.json` is ours: dot files are a filesystem's own (NFS silly renames), temps are
    // written in building/, and any other name was put there by someone else.
    if (!name.endsWith(STATE_SUFFIX)) continue;
    const key = name.slice(0, -STATE_SUFFIX.length);
    if (URI_KEY_PATTERN.test(key)) keys.push(key);
  }
  return keys;
}

/** A retry state file's URI key and parsed JSON; `state` is undefined when the file is not JSON or vanished meanwhile. */
export interface UriStateFile {
  readonly uriKey: string;
  readonly state: unknown;
}

/** The retry state files, read, at most `limit` of them; `unread`: how many more there are. */
export async function listUriStates(ctx: StoreContext, limit = Number.POSITIVE_INFINITY): Promise<{ states: UriStateFile[]; unread: number }> {
  const keys = await listUriStateKeys(ctx);
  const states = await mapBounded(keys.slice(0, limit), ctx.concurrency, async (uriKey) => ({
    uriKey,
    state: await readJsonTolerant(ctx.fs, ctx.paths.uriStateFile(uriKey), 'read uri state'),
  }));
  return { states, unread: keys.length - states.length };
}
