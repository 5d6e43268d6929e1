import type { StoreContext } from './store-context.js';
import { readdirStrict } from './store-listing.js';

const STATE_SUFFIX = '.json';

/** The URI keys with a retry state file: one `readdir` of `uri-state/`, no reads. */
export async function listUriStateKeys(ctx: StoreContext): Promise<string[]> {
  const names = await readdirStrict(ctx, ctx.paths.uriState, 'list uri states');
  const keys: string[] = [];
  for (const name of names) {
    // Dot files are a filesystem's own (NFS silly renames); temps are written in building/.
    if (name.startsWith('.') || !name.endsWith(STATE_SUFFIX) || name.length === STATE_SUFFIX.length) continue;
    keys.push(name.slice(0, -STATE_SUFFIX.length));
  }
  return keys;
}
