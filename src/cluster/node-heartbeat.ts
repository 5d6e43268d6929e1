import { replaceJsonFile } from '../runtime/replace-json-file.js';
import { join } from 'node:path';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';

/** `nodes/<nodeId>.json`: who this node is and that it is alive. */
export interface NodeRecord {
  readonly version: 1;
  readonly nodeId: string;
  readonly pid: number;
  readonly host: string;
  readonly refrelayVersion: string;
  readonly startedAt: number;
  readonly beatAt: number;
  readonly counter: number;
  readonly running: readonly string[];
  readonly clockOffsetMs: number | null;
  /** Set by a clean shutdown: the id is free again at once. */
  readonly stoppedAt: number | null;
  /** Destination hosts this node has stopped scheduling (open circuits), for `status` on any node. */
  readonly circuits?: readonly OpenCircuit[];
  /** Tasks in this machine's spool not yet forwarded into the store; absent when none. */
  readonly spooled?: number;
  /** This node's jobs or passes meet a store that refuses writes (full, read-only, I/O errors): for `status` on any node. */
  readonly storeNotWritable?: StoreNotWritable;
}

export interface StoreNotWritable {
  readonly code: string;
  /** This node's clock. */
  readonly sinceAt: number;
  readonly failures: number;
  readonly lastError: string;
}

export interface OpenCircuit {
  readonly host: string;
  readonly state: 'open' | 'half-open';
  readonly trips: number;
  /** This node's clock. */
  readonly nextProbeAt: number | null;
  readonly lastError: string | null;
}

export interface NodeHeartbeatOptions {
  readonly nodesDir: string;
  readonly nodeId: string;
  readonly pid: number;
  readonly host: string;
  readonly version: string;
  readonly clock: Clock;
  readonly random: Random;
}

/** Writes this node's record with temp + rename so readers never see half a file. */
export class NodeHeartbeat {
  private counter = 0;
  private readonly startedAt: number;

  constructor(private readonly options: NodeHeartbeatOptions) {
    this.startedAt = options.clock.now();
  }

  get path(): string {
    return join(this.options.nodesDir, `${this.options.nodeId}.json`);
  }

  async beat(
    running: readonly string[],
    clockOffsetMs: number | null,
    stopped = false,
    circuits: readonly OpenCircuit[] = [],
    storeNotWritable?: StoreNotWritable,
    spooled = 0,
  ): Promise<NodeRecord> {
    const { options } = this;
    this.counter++;
    const record: NodeRecord = {
      version: 1,
      nodeId: options.nodeId,
      pid: options.pid,
      host: options.host,
      refrelayVersion: options.version,
      startedAt: this.startedAt,
      beatAt: options.clock.now(),
      counter: this.counter,
      running,
      clockOffsetMs,
      stoppedAt: stopped ? options.clock.now() : null,
      ...(circuits.length > 0 && !stopped ? { circuits } : {}),
      ...(storeNotWritable !== undefined && !stopped ? { storeNotWritable } : {}),
      ...(spooled > 0 ? { spooled } : {}),
    };
    await replaceJsonFile(join(options.nodesDir, `.${options.nodeId}.${options.random.token()}.tmp`), this.path, record);
    return record;
  }
}
