import { systemClock, type Clock } from '../runtime/clock.js';
import { systemRandom, type Random } from '../runtime/random.js';
import { nodeStoreFs, type StoreFs } from './store-fs.js';
import { StorePaths, fileSafe } from './store-paths.js';
import type { StoreEvent } from './store-types.js';

/** What the store's helpers share; built once by `TaskStore`. */
export interface StoreContext {
  readonly fs: StoreFs;
  readonly paths: StorePaths;
  readonly nodeId: string;
  /** `nodeId` made safe for file names. */
  readonly nodeTag: string;
  readonly random: Random;
  readonly clock: Clock;
  readonly concurrency: number;
  readonly onEvent: (event: StoreEvent) => void;
}

export interface StoreContextOptions {
  /** `replication.storePath`. */
  readonly root: string;
  readonly nodeId: string;
  readonly fs?: StoreFs;
  readonly random?: Random;
  readonly clock?: Clock;
  /** Files read or moved in parallel; network filesystems like a handful, not thousands. Default 32. */
  readonly concurrency?: number;
  /** Quarantines and other things worth a log line or a metric. */
  readonly onEvent?: (event: StoreEvent) => void;
}

/**
 * A context for work on a store that `TaskStore` must not open first: `refrelay init --upgrade`
 * works on a store of the previous layout, which every `TaskStore` method refuses. Same defaults
 * as `TaskStore`.
 */
export function storeContext(options: StoreContextOptions): StoreContext {
  return {
    fs: options.fs ?? nodeStoreFs,
    paths: new StorePaths(options.root),
    nodeId: options.nodeId,
    nodeTag: fileSafe(options.nodeId),
    random: options.random ?? systemRandom,
    clock: options.clock ?? systemClock,
    concurrency: Math.max(1, options.concurrency ?? 32),
    onEvent: options.onEvent ?? (() => undefined),
  };
}
