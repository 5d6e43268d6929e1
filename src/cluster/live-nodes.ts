import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_ID } from '../config/config-values.js';
import type { ReplicationConfig } from '../config/types.js';
import type { Clock } from '../runtime/clock.js';

/**
 * How recently a node's record must have been replaced for the node to count as alive: three
 * beats (one per distributionInterval) and a lockStale. Record mtimes are the store's clock, so a
 * node's own skew cannot make it look dead.
 */
export function nodeAliveWithinMs(config: Pick<ReplicationConfig, 'distributionIntervalMs' | 'lockStaleMs'>): number {
  return 3 * config.distributionIntervalMs + config.lockStaleMs;
}

/** This node and the nodes alive by their records; the same object until the list changes. */
export interface Membership {
  readonly self: string;
  /** Sorted node ids, this node's included. */
  readonly live: readonly string[];
}

export interface LiveNodesOptions {
  readonly nodesDir: string;
  readonly nodeId: string;
  readonly clock: Clock;
  /** Store clock minus ours: record mtimes are the store's clock. */
  readonly storeClockOffsetMs: () => number;
  /** A record replaced within this long is a live node's (as `status` calls it alive). */
  readonly aliveWithinMs: () => number;
}

/**
 * The live nodes as `nodes/` says: one `readdir` and an `lstat` per record, never a read (the
 * records are untrusted; a name that is not a node id's record is no node). A record's mtime is
 * its last beat. A node that stopped cleanly counts until its record ages out: the URIs it was
 * preferred for wait one more pass meanwhile, and nothing is lost.
 */
export class LiveNodes {
  private current: Membership;

  constructor(private readonly options: LiveNodesOptions) {
    this.current = Object.freeze({ self: options.nodeId, live: Object.freeze([options.nodeId]) });
  }

  get membership(): Membership {
    return this.current;
  }

  async refresh(): Promise<void> {
    const { nodesDir, nodeId, clock } = this.options;
    const storeNow = clock.now() + this.options.storeClockOffsetMs();
    const live = new Set([nodeId]);
    for (const [id, mtimeMs] of await nodeBeats(nodesDir)) if (storeNow - mtimeMs <= this.options.aliveWithinMs()) live.add(id);
    const sorted = [...live].sort();
    if (sorted.join('\n') !== this.current.live.join('\n')) this.current = Object.freeze({ self: nodeId, live: Object.freeze(sorted) });
  }
}

/** Node id → its record's mtime (its last beat), by `lstat`: the records are untrusted and never read. */
export async function nodeBeats(nodesDir: string): Promise<Map<string, number>> {
  const beats = new Map<string, number>();
  for (const name of await readdir(nodesDir)) {
    if (!name.endsWith('.json')) continue;
    const id = name.slice(0, -'.json'.length);
    if (!NODE_ID.test(id)) continue;
    const stats = await lstat(join(nodesDir, name)).catch(() => undefined);
    if (stats?.isFile() === true) beats.set(id, stats.mtimeMs);
  }
  return beats;
}
