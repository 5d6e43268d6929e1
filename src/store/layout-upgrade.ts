import { StoreError } from '../errors.js';
import { GerritEventsDirError } from './gerrit-events-dir.js';
import { sortWaiting, type LeftEntry, type SortReport } from './loose-tasks.js';
import { replaceAtomic } from './publish.js';
import type { StoreContext } from './store-context.js';
import {
  STORE_FORMAT,
  STORE_MARKER_NAME,
  StoreLayoutError,
  StoreMissingError,
  inspectStore,
  makeLayoutFolders,
  markerPath,
  writeMarker,
  type StoreMarker,
} from './store-marker.js';
import { plural } from '../runtime/plural.js';

export { sortLooseTasks, type LeftEntry, type SortReport } from './loose-tasks.js';

/** What `upgradeLayout` found and did. */
export interface LayoutUpgrade extends SortReport {
  /** The layout the store had; 'unmarked' for an earlier refrelay's store, which predates the marker (layout 1). */
  readonly from: number | 'unmarked';
  /** False when the store was at this layout already: nothing was touched. */
  readonly upgraded: boolean;
}

/** Task files named in the refusal; the rest are counted. */
const NAMED_LEFT = 5;

/** Readable task files the upgrade could not sort: the marker stays, so no node of this version starts on them. */
export class LayoutUpgradeError extends StoreError {
  constructor(
    root: string,
    readonly left: readonly LeftEntry[],
  ) {
    const named = left.slice(0, NAMED_LEFT).map((entry) => `${entry.name} (${entry.reason})`);
    if (left.length > NAMED_LEFT) named.push(`${left.length - NAMED_LEFT} more`);
    super(
      `the store at ${root} stays at layout 1: ${plural(left.length, 'task file')} in ref-updates/waiting/ ` +
        `could not be moved into ${left.length === 1 ? 'its folder' : 'their folders'}: ${named.join('; ')}. ` +
        'Move aside what is in the way, then run `refrelay init --upgrade` again (what was moved stays moved)',
    );
  }
}

/**
 * Moves a layout 1 store to layout 2, every node stopped (the CLI checks that): every flat task
 * file `waiting/<taskKey>.json` is renamed into `waiting/<uriKey>[.bulk]/` (loose-tasks.ts), then
 * the marker is replaced by one of layout 2 with the same store id and creation time (temp +
 * rename, so a reader sees one marker or the other). The marker goes last: a run cut short leaves
 * a layout 1 store, some tasks already in their folders, and running it again finishes the job.
 * An unmarked store of an earlier refrelay is sorted the same way and then marked. Entries that
 * are not regular task files (symlinks, other names) are left alone and reported; a task file
 * that cannot be sorted keeps the marker at layout 1 (LayoutUpgradeError).
 */
export async function upgradeLayout(ctx: StoreContext): Promise<LayoutUpgrade> {
  const state = await inspectStore(ctx);
  const root = ctx.paths.root;
  if (state.kind === 'gerrit') throw new GerritEventsDirError(root, state.found);
  if (state.kind === 'missing') throw new StoreMissingError(root, `${STORE_MARKER_NAME} is missing`);
  if (state.kind === 'marked' && state.marker.format >= STORE_FORMAT) {
    return { from: state.marker.format, upgraded: false, moved: 0, duplicates: 0, quarantined: 0, skipped: 0, left: [] };
  }
  await makeLayoutFolders(ctx, state.kind === 'marked');
  const sorted = await sortWaiting(ctx);
  const stuck = sorted.left.filter((entry) => entry.task);
  if (stuck.length > 0) throw new LayoutUpgradeError(root, stuck);
  if (state.kind === 'marked') {
    await replaceMarker(ctx, { ...state.marker, format: STORE_FORMAT });
  } else {
    const { format } = await writeMarker(ctx);
    if (format < STORE_FORMAT) throw new StoreLayoutError(root, format);
  }
  return { from: state.kind === 'marked' ? state.marker.format : 'unmarked', upgraded: true, ...sorted };
}

async function replaceMarker(ctx: StoreContext, marker: StoreMarker): Promise<void> {
  const text = `${JSON.stringify({ format: marker.format, storeId: marker.storeId, createdAt: marker.createdAt })}\n`;
  await replaceAtomic(ctx, markerPath(ctx.paths.root), text, STORE_MARKER_NAME, 'upgrade store marker');
}
