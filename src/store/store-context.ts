import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import type { StoreFs } from './store-fs.js';
import type { StorePaths } from './store-paths.js';
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
