import { readBoundedText, STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { join } from 'node:path';
import { RefrelayError } from '../errors.js';
import type { Clock } from '../runtime/clock.js';

export class NodeIdInUseError extends RefrelayError {
  constructor(message: string) {
    super('NODE_ID_IN_USE', message);
  }
}

interface RecordView {
  pid: number;
  host: string;
  counter: number;
  stoppedAt: number | null;
}

async function readRecord(path: string): Promise<RecordView | undefined> {
  try {
    const value = JSON.parse(await readBoundedText(path, STORE_RECORD_MAX_BYTES)) as Record<string, unknown>;
    return {
      pid: typeof value.pid === 'number' ? value.pid : 0,
      host: typeof value.host === 'string' ? value.host : '',
      counter: typeof value.counter === 'number' ? value.counter : -1,
      stoppedAt: typeof value.stoppedAt === 'number' ? value.stoppedAt : null,
    };
  } catch {
    return undefined;
  }
}

export interface NodeIdCheck {
  readonly nodesDir: string;
  readonly nodeId: string;
  readonly host: string;
  readonly pid: number;
  readonly clock: Clock;
  /** How long to watch a record whose writer might still be alive (about two heartbeats). */
  readonly observeMs: number;
  readonly isPidAlive: (pid: number) => boolean;
  readonly sleep: (ms: number) => Promise<void>;
}

/**
 * Refuses to start a second daemon with a node id that a live daemon uses on the same store:
 * two processes recovering "their own" claims would take each other's work. Liveness is judged
 * as for locks — the heartbeat counter moves — except that a record whose pid is gone on this
 * very host, or which says it stopped, is known dead at once.
 */
export async function assertNodeIdFree(check: NodeIdCheck): Promise<void> {
  const path = join(check.nodesDir, `${check.nodeId}.json`);
  const first = await readRecord(path);
  if (first === undefined || first.stoppedAt !== null) return;
  if (first.host === check.host && (first.pid === check.pid || !check.isPidAlive(first.pid))) return;
  const started = check.clock.monotonic();
  while (check.clock.monotonic() - started < check.observeMs) {
    await check.sleep(Math.min(200, check.observeMs));
    const now = await readRecord(path);
    if (now === undefined || now.stoppedAt !== null) return;
    if (now.counter !== first.counter) {
      throw new NodeIdInUseError(
        `node id "${check.nodeId}" is already in use by a running daemon (pid ${now.pid} on host ${now.host || 'unknown'}): ` +
          'give every node its own replication.nodeId or --node-id',
      );
    }
  }
}
