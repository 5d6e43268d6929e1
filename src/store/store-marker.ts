import { dirname, join } from 'node:path';
import { StoreError } from '../errors.js';
import { entryType, STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { parseJsonObject } from '../runtime/json-object.js';
import type { StoreContext } from './store-context.js';
import { GerritEventsDirError, findGerritQueue, type GerritQueueFound } from './gerrit-events-dir.js';
import { removeQuietly, storeError } from './store-fs.js';
import { errnoName, isGone, isPathGone } from '../runtime/errno.js';
import { STORE_MARKER_NAME } from './store-paths.js';
import { writeDurable } from './publish.js';
import { sortWaiting } from './loose-tasks.js';

/**
 * `<storePath>/refrelay-store.json` says "this folder is a refrelay store" (DESIGN.md invariant
 * 9). A network filesystem that is not mounted leaves an empty folder, or none, at the store
 * path: without the marker nothing is written there, so no update lands on the local disk
 * under the mount point, invisible to every other node once the mount returns.
 */
export { STORE_MARKER_NAME };
/**
 * The layout this refrelay reads and writes. 2: waiting tasks in one folder per URI and lane
 * (DESIGN.md "Waiting folders (layout 2)"); 1 kept them flat in `waiting/`, and
 * `refrelay init --upgrade` (layout-upgrade.ts) moves such a store to 2.
 */
export const STORE_FORMAT = 2;

export interface StoreMarker {
  readonly format: number;
  readonly storeId: string;
  readonly createdAt: number;
}

/** What is at the store path. */
export type StoreState =
  | { readonly kind: 'marked'; readonly marker: StoreMarker }
  /** No marker, but the layout of an earlier refrelay (`ref-updates/waiting/`): adoptable. */
  | { readonly kind: 'earlier' }
  /** No marker, and Gerrit's replication plugin's queue (gerrit-events-dir.ts): never adopted. */
  | { readonly kind: 'gerrit'; readonly found: GerritQueueFound }
  | { readonly kind: 'missing' };

/** What to do when the store path holds no marker (TaskStoreOptions.ifUnmarked). */
export type UnmarkedStorePolicy = 'create' | 'adopt-earlier' | 'refuse';

export class StoreMissingError extends StoreError {
  constructor(
    root: string,
    readonly detail: string,
  ) {
    super(
      `no refrelay store at ${root} (${detail}). If the store is on a network filesystem, it may not be mounted; ` +
        'to create a new store there, run: refrelay init --config FILE',
    );
  }
}

/** A marked store of an earlier layout: every node refuses it until `refrelay init --upgrade` has moved it. */
export class StoreLayoutError extends StoreError {
  constructor(
    root: string,
    readonly format: number,
  ) {
    super(
      `the store at ${root} has layout ${format}; this refrelay needs layout ${STORE_FORMAT}: ` +
        'stop every node and run `refrelay init --upgrade --config FILE`',
    );
  }
}

export function markerPath(root: string): string {
  return join(root, STORE_MARKER_NAME);
}

/** The marker, or whether an earlier refrelay's store (or nothing) is there. Bad markers throw. */
export async function inspectStore(ctx: StoreContext): Promise<StoreState> {
  const path = markerPath(ctx.paths.root);
  let read;
  try {
    read = await ctx.fs.readBounded(path, STORE_RECORD_MAX_BYTES);
  } catch (error) {
    // ESTALE is no answer about the marker (a stale handle to the store's folder), not its absence.
    const code = errnoName(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw storeError('read store marker', path, error);
    if (!(await isRealFolder(ctx, ctx.paths.waiting))) return { kind: 'missing' };
    const found = await findGerritQueue(ctx.fs, ctx.paths);
    return found === undefined ? { kind: 'earlier' } : { kind: 'gerrit', found };
  }
  if (read.kind === 'refused') throw new StoreError(`the store marker ${path} is not a refrelay store marker: ${read.reason}`);
  const marker = parseMarker(read.text);
  if (marker === undefined) throw new StoreError(`the store marker ${path} is damaged: expected {"format":${STORE_FORMAT},"storeId":…}`);
  if (marker.format > STORE_FORMAT) {
    throw new StoreError(`the store at ${ctx.paths.root} has format ${marker.format}, made by a newer refrelay; this one reads format ${STORE_FORMAT}`);
  }
  return { kind: 'marked', marker };
}

export function parseMarker(text: string): StoreMarker | undefined {
  const fields = parseJsonObject(text);
  if (fields === undefined) return undefined;
  const { format, storeId, createdAt } = fields;
  if (typeof format !== 'number' || !Number.isSafeInteger(format) || format < 1) return undefined;
  if (typeof storeId !== 'string' || storeId === '' || storeId.length > 200) return undefined;
  return { format, storeId, createdAt: typeof createdAt === 'number' ? createdAt : 0 };
}

/**
 * Writes a new marker unless one exists (`link` never replaces: two nodes adopting at once make
 * one marker, and both go on with it). Returns the marker that stands.
 */
export async function writeMarker(ctx: StoreContext): Promise<StoreMarker> {
  const marker: StoreMarker = { format: STORE_FORMAT, storeId: `${ctx.random.token()}${ctx.random.token()}`, createdAt: ctx.clock.now() };
  const path = markerPath(ctx.paths.root);
  const temp = join(ctx.paths.root, `.${STORE_MARKER_NAME}.${ctx.nodeTag}.${ctx.random.token()}.tmp`);
  await writeDurable(ctx, temp, `${JSON.stringify(marker)}\n`, 'write store marker');
  try {
    await ctx.fs.link(temp, path);
  } catch (error) {
    if (errnoName(error) !== 'EEXIST') throw storeError('write store marker', path, error);
    const standing = await inspectStore(ctx);
    if (standing.kind === 'marked') return standing.marker;
    throw storeError('write store marker', path, error);
  } finally {
    await removeQuietly(ctx.fs, temp);
  }
  return marker;
}

async function isRealFolder(ctx: StoreContext, path: string): Promise<boolean> {
  try {
    return (await ctx.fs.lstat(path)).isDirectory();
  } catch (error) {
    if (isPathGone(error)) return false;
    throw storeError('inspect store', path, error);
  }
}

/** How `openStore` found the store. */
export type StoreOpening = 'existing' | 'adopted' | 'created';

/**
 * Makes sure `root` is a refrelay store before anything is written there, per `policy`: a
 * marked store of this layout is used, one of an earlier layout refused (StoreLayoutError); an
 * earlier refrelay's store is adopted (tasks sorted, marker written) unless the policy refuses; a
 * path with neither is created only under 'create'. Then makes the layout's folders that are
 * missing (inside a marked store that is safe: the marker proves the mount).
 */
export async function openStore(ctx: StoreContext, policy: UnmarkedStorePolicy): Promise<StoreOpening> {
  const state = await inspectStore(ctx);
  if (state.kind === 'gerrit') throw new GerritEventsDirError(ctx.paths.root, state.found);
  if (state.kind === 'missing' && policy !== 'create') throw new StoreMissingError(ctx.paths.root, `${STORE_MARKER_NAME} is missing`);
  if (state.kind === 'earlier' && policy === 'refuse') {
    throw new StoreMissingError(ctx.paths.root, `made by an earlier refrelay, without ${STORE_MARKER_NAME}; \`refrelay init\` or a daemon's start adopts it`);
  }
  if (state.kind === 'marked' && state.marker.format < STORE_FORMAT) throw new StoreLayoutError(ctx.paths.root, state.marker.format);
  if (state.kind === 'missing') await makeFolder(ctx, ctx.paths.root, true);
  await makeLayoutFolders(ctx, state.kind === 'marked');
  if (state.kind === 'marked') return 'existing';
  if (state.kind === 'earlier') await adoptWaiting(ctx);
  // A peer's marker may have gone in first; one of an earlier refrelay is refused like any other.
  const { format } = await writeMarker(ctx);
  if (format < STORE_FORMAT) throw new StoreLayoutError(ctx.paths.root, format);
  return state.kind === 'earlier' ? 'adopted' : 'created';
}

/**
 * Makes the layout's folders that are missing; in a marked store one was removed by someone: made
 * again, and said so. Each is looked at before any is made, so a store where one is not a folder
 * is refused unchanged, naming it.
 */
export async function makeLayoutFolders(ctx: StoreContext, marked: boolean): Promise<void> {
  const missing = await missingLayoutFolders(ctx);
  for (const dir of ctx.paths.folders) {
    await makeFolder(ctx, dir, true);
    if (marked && missing.has(dir)) ctx.onEvent({ type: 'folder-recreated', path: dir });
  }
}

/** The layout's folders that are missing; a StoreError naming every one (and `ref-updates/`) that is there but no folder. */
async function missingLayoutFolders(ctx: StoreContext): Promise<Set<string>> {
  const entries = new Set(ctx.paths.folders.flatMap((dir) => [dirname(dir), dir]).filter((dir) => dir !== ctx.paths.root));
  const missing = new Set<string>();
  const refusals: string[] = [];
  for (const dir of entries) {
    const found = await layoutFolderState(ctx, dir);
    if (found === 'missing') missing.add(dir);
    else if (found !== 'folder') refusals.push(found.refused);
  }
  if (refusals.length > 0) throw new StoreError(`the store at ${ctx.paths.root} cannot be used: ${refusals.join('; ')}`);
  return missing;
}

/**
 * What is at a layout folder's path: a folder, nothing, or an entry refused (and why). A link is the
 * operator's to place (DESIGN.md invariant 9), followed like the store path itself: `mkdir` of one
 * that leads to a folder changes nothing, and fails on one that leads nowhere or to a file.
 */
async function layoutFolderState(ctx: StoreContext, dir: string): Promise<'folder' | 'missing' | { refused: string }> {
  let stats;
  try {
    stats = await ctx.fs.lstat(dir);
  } catch (error) {
    if (isPathGone(error)) return 'missing';
    throw storeError('inspect store', dir, error);
  }
  if (stats.isDirectory()) return 'folder';
  if (!stats.isSymbolicLink()) return { refused: `${dir} is ${entryType(stats)}, not a folder: replace it with a folder` };
  try {
    await ctx.fs.mkdir(dir, { recursive: true });
    return 'folder';
  } catch {
    return { refused: `${dir} is a symbolic link that does not lead to a folder: make it lead to one, or replace it with a folder` };
  }
}

/**
 * An earlier refrelay's store is of layout 1 (it predates the marker): its flat task files are
 * sorted into their folders before the layout 2 marker goes in, as `init --upgrade` would, so
 * none is left where no node of this version looks. A crash before the marker leaves the store
 * unmarked, and the next adoption finishes the sorting. A task file that cannot be sorted (its
 * folder's name taken by a file or a symlink) is reported, not a reason to stop the node.
 */
async function adoptWaiting(ctx: StoreContext): Promise<void> {
  const sorted = await sortWaiting(ctx);
  for (const entry of sorted.left) {
    if (entry.task) ctx.onEvent({ type: 'waiting-task-left', path: join(ctx.paths.waiting, entry.name), reason: entry.reason });
  }
}

/**
 * `refrelay init`: the store folder itself is made, never its parents — a parent that is
 * missing is most likely a network filesystem's mount point that is not mounted.
 */
export async function initStore(ctx: StoreContext): Promise<StoreOpening> {
  const state = await inspectStore(ctx);
  // A marked store is one already: files named like the plugin's there are anyone's to drop, and
  // `config check` and the daemon warn about them. Other opens check the unmarked case only.
  if (state.kind === 'gerrit') throw new GerritEventsDirError(ctx.paths.root, state.found);
  if (state.kind === 'missing') await makeFolder(ctx, ctx.paths.root, false);
  return openStore(ctx, 'create');
}

async function makeFolder(ctx: StoreContext, dir: string, parents: boolean): Promise<void> {
  try {
    if (parents) await ctx.fs.mkdir(dir, { recursive: true });
    else await ctx.fs.mkdir(dir);
  } catch (error) {
    if (!parents && errnoName(error) === 'EEXIST') return;
    if (!parents && isGone(error))
      throw new StoreError(`cannot create the store folder ${dir}: its parent folder does not exist (is the network filesystem mounted?)`, { cause: error });
    throw storeError('create store folder', dir, error);
  }
}
