import { join, sep } from 'node:path';
import { StoreError } from '../errors.js';

/** Names of published task files; anything else in a task folder (`.nfs*`, temps, editor droppings) is not ours. */
export const TASK_FILE_PATTERN = /^[0-9a-f]{40}\.json$/;
export const TASK_FILE_NAME_LENGTH = 45;
export const URI_KEY_PATTERN = /^[0-9a-f]{40}$/;
/**
 * The waiting folder of a URI's live tasks is `waiting/<uriKey>`, of its full syncs
 * `waiting/<uriKey>.bulk` (DESIGN.md "Store layout"): listing names alone tells which URIs have
 * work and in which lane, and a live update arriving for a URI with only bulk work waiting makes a
 * new folder, which every node sees.
 */
export const WAITING_FOLDER_PATTERN = /^([0-9a-f]{40})(\.bulk)?$/;
export const BULK_SUFFIX = '.bulk';
/** The lock component's record inside a lock folder; never treated as a task. */
export const OWNER_RECORD_NAME = 'owner.json';
export const CORRUPT_REASON_SUFFIX = '.reason';
/**
 * `failed/dropped/`: failed tasks an operator dropped. Not 40 hex, so no listing, retry or sweep
 * of `failed/<uriKey>/` folders ever takes it for one.
 */
export const DROPPED_FOLDER_NAME = 'dropped';
/** Who dropped the tasks of a drop folder, and when; written before any task moves in. */
export const DROPPED_RECORD_NAME = 'dropped.json';
/** The store marker at the top of the store (store-marker.ts). */
export const STORE_MARKER_NAME = 'refrelay-store.json';

/** `waiting/<uriKey>` for the live lane, `waiting/<uriKey>.bulk` for full syncs. */
export function waitingFolderName(uriKey: string, lane: 'live' | 'bulk'): string {
  return lane === 'bulk' ? `${uriKey}${BULK_SUFFIX}` : uriKey;
}

/** The URI key and lane of a waiting folder's name; undefined for any other name. */
export function parseWaitingFolderName(name: string): { readonly uriKey: string; readonly lane: 'live' | 'bulk' } | undefined {
  const match = WAITING_FOLDER_PATTERN.exec(name);
  return match === null ? undefined : { uriKey: match[1]!, lane: match[2] === undefined ? 'live' : 'bulk' };
}

export function isTaskFileName(name: string): boolean {
  return name.length === TASK_FILE_NAME_LENGTH && TASK_FILE_PATTERN.test(name);
}

/** Where everything lives under `replication.storePath` (DESIGN.md "Store layout"). */
export class StorePaths {
  readonly refUpdates: string;
  readonly building: string;
  readonly waiting: string;
  readonly running: string;
  readonly failed: string;
  /** Drop folders, one per drop: `failed/dropped/<YYYYMMDDTHHMMSSZ>.<token>/`. */
  readonly dropped: string;
  readonly corrupt: string;
  /** Claim folders of finished pushes, moved aside whole and deleted off the push path. */
  readonly done: string;
  readonly uriState: string;
  readonly nodes: string;
  /** Per-node push history (observe/uri-history.ts) and the periodic verify's lock and summary. */
  readonly history: string;
  readonly verify: string;

  constructor(readonly root: string) {
    this.refUpdates = join(root, 'ref-updates');
    this.building = join(this.refUpdates, 'building');
    this.waiting = join(this.refUpdates, 'waiting');
    this.running = join(this.refUpdates, 'running');
    this.failed = join(this.refUpdates, 'failed');
    this.dropped = join(this.failed, DROPPED_FOLDER_NAME);
    this.corrupt = join(this.refUpdates, 'corrupt');
    this.done = join(this.refUpdates, 'done');
    this.uriState = join(root, 'uri-state');
    this.nodes = join(root, 'nodes');
    this.history = join(root, 'history');
    this.verify = join(root, 'verify');
  }

  /**
   * The layout's folders, in the order a new store gets them: refrelay's own first, so that a node
   * that looks while a peer makes them never sees waiting/ and running/ without them, which is
   * what the plugin's events directory looks like (gerrit-events-dir.ts).
   */
  get folders(): readonly string[] {
    return [this.uriState, this.nodes, this.failed, this.corrupt, this.building, this.waiting, this.running, this.done, this.history, this.verify];
  }

  /** `waiting/<folder>`, a URI's waiting folder (waitingFolderName). */
  waitingFolder(folder: string): string {
    return inFolder(this.waiting, folder, 'waiting folder name');
  }

  /** A task file in a URI's waiting folder. */
  waitingFile(folder: string, name: string): string {
    return inFolder(this.waitingFolder(folder), name);
  }

  /**
   * `lockName` is a lock folder under running/ (`<uriKey>`, or a tombstone name), or a claim
   * folder inside one (`<uriKey>/<leaseId>`): claims live in a folder named after the lease, so
   * a holder that lost its lock addresses paths that no longer exist after a takeover.
   */
  lockFolder(lockName: string): string {
    const parts = lockName.split('/');
    if (parts.length > 2) throw new StoreError(`invalid lock name: ${JSON.stringify(lockName)}`);
    return join(this.running, ...parts.map((part) => plainName(part, 'lock name')));
  }

  claimedFile(lockName: string, name: string): string {
    return inFolder(this.lockFolder(lockName), name);
  }

  /** `claimedFile` for many names of one lock folder. */
  claimedFiles(lockName: string, names: readonly string[]): string[] {
    const folder = this.lockFolder(lockName);
    return names.map((name) => inFolder(folder, name));
  }

  /** Where the lease `leaseId` of lock `lockName` retires its claim folder: `done/<lockName>.<leaseId>`. */
  doneFolder(lockName: string, leaseId: string): string {
    return join(this.done, `${plainName(lockName, 'lock name')}.${plainName(leaseId, 'lease id')}`);
  }

  failedFolder(uriKey: string): string {
    return join(this.failed, plainName(uriKey, 'uri key'));
  }

  failedFile(uriKey: string, name: string): string {
    return join(this.failedFolder(uriKey), plainName(name, 'task file name'));
  }

  failedReasonFile(uriKey: string, name: string): string {
    return `${this.failedFile(uriKey, name)}.reason.json`;
  }

  droppedFolder(name: string): string {
    return join(this.dropped, plainName(name, 'drop folder name'));
  }

  uriStateFile(uriKey: string): string {
    return join(this.uriState, `${plainName(uriKey, 'uri key')}.json`);
  }
}

/**
 * A task file in one of the store's folders. Plain concatenation: the folder is already
 * normalised and a checked name has no separator, and this runs for every claimed file.
 */
function inFolder(folder: string, name: string, what = 'task file name'): string {
  return `${folder}${sep}${plainName(name, what)}`;
}

/** Whether a name from a listing can be a path segment: one with a separator would escape its folder. */
export function isPlainName(name: string): boolean {
  return !(name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\\') || name.includes('\0'));
}

/** Names come from listings and other components; one that is not plain is refused. */
function plainName(name: string, what: string): string {
  if (!isPlainName(name)) throw new StoreError(`invalid ${what}: ${JSON.stringify(name)}`);
  return name;
}

/** Node ids end up in temp and quarantine names; keep those names portable. */
export function fileSafe(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]/g, '_');
}
