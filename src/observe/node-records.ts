import { nodeAliveWithinMs } from '../cluster/live-nodes.js';
import type { ReplicationConfig } from '../config/types.js';
import { redactText } from '../runtime/redact.js';

/**
 * What the node records in `nodes/` say, for `status` and the page: each node's state, clock and
 * store trouble, and the destination-host circuits it has open. The records are the store's, so
 * untrusted: only well-typed fields are taken, error texts redacted.
 */

/** `stopped`: the record says it shut down cleanly; `stale`: its heartbeat stopped moving. */
export type NodeState = 'alive' | 'stale' | 'stopped';

export interface NodeStatus {
  nodeId: string;
  state: NodeState;
  /** Age of the record file's mtime on the store's clock: how long ago the node last beat. */
  lastBeatAgeMs: number;
  /** The node's own measurement, store − node (ms); null before it measured. */
  clockOffsetMs: number | null;
  /** |clockOffsetMs| above lockStale / 4: that node should run NTP. */
  clockWarning: boolean;
  /** Present while an alive node says its jobs or passes meet a store refusing writes (`sinceAt`: its own clock). */
  storeNotWritable?: { code: string; sinceAt: number; failures: number; lastError: string };
  /** Updates spooled on that node's machine (the store could not be written), not forwarded yet. */
  spooledTasks: number;
  record: Record<string, unknown>;
}

export interface CircuitStatus {
  nodeId: string;
  host: string;
  state: 'open' | 'half-open';
  /** How many times in a row it opened: the backoff exponent. */
  trips: number;
  /** Until the node lets its next probe through; null while the probe runs. */
  nextProbeInMs: number | null;
  lastError: string | null;
}

/**
 * Open circuits a node published with its last beat. Their probe times are on that node's clock;
 * the age of its record (store clock) turns them into a wait from now, whatever the skew.
 */
export function circuitsOf(record: unknown, recordMtimeMs: number, storeNow: number): CircuitStatus[] {
  if (record === null || typeof record !== 'object') return [];
  const fields = record as Record<string, unknown>;
  if (typeof fields.nodeId !== 'string' || typeof fields.stoppedAt === 'number' || !Array.isArray(fields.circuits)) return [];
  const beatAt = typeof fields.beatAt === 'number' ? fields.beatAt : undefined;
  const nodeId = fields.nodeId;
  return fields.circuits.flatMap((value: unknown) => {
    if (value === null || typeof value !== 'object') return [];
    const circuit = value as Record<string, unknown>;
    if (typeof circuit.host !== 'string' || (circuit.state !== 'open' && circuit.state !== 'half-open')) return [];
    const probeIn =
      typeof circuit.nextProbeAt === 'number' && beatAt !== undefined ? circuit.nextProbeAt - beatAt - Math.max(0, storeNow - recordMtimeMs) : null;
    return [
      {
        nodeId,
        host: redactText(circuit.host),
        state: circuit.state,
        trips: typeof circuit.trips === 'number' ? circuit.trips : 0,
        nextProbeInMs: circuit.state === 'half-open' || probeIn === null ? null : Math.max(0, Math.round(probeIn)),
        lastError: typeof circuit.lastError === 'string' ? redactText(circuit.lastError) : null,
      },
    ];
  });
}

/**
 * Alive while its record keeps being replaced (cluster/live-nodes.ts nodeAliveWithinMs).
 */
export function nodeStatus(config: ReplicationConfig, record: unknown, ageMs: number): NodeStatus[] {
  if (record === null || typeof record !== 'object') return [];
  const fields = record as Record<string, unknown>;
  if (typeof fields.nodeId !== 'string') return [];
  const offset = typeof fields.clockOffsetMs === 'number' ? fields.clockOffsetMs : null;
  const lastBeatAgeMs = Math.max(0, Math.round(ageMs));
  let state: NodeState = lastBeatAgeMs <= nodeAliveWithinMs(config) ? 'alive' : 'stale';
  if (typeof fields.stoppedAt === 'number') state = 'stopped';
  return [
    {
      nodeId: fields.nodeId,
      state,
      lastBeatAgeMs,
      clockOffsetMs: offset,
      clockWarning: offset !== null && Math.abs(offset) > config.lockStaleMs / 4,
      ...(state === 'alive' ? storeNotWritableOf(fields.storeNotWritable) : {}),
      // An untrusted record: anything but a count is no information.
      spooledTasks: typeof fields.spooled === 'number' && Number.isSafeInteger(fields.spooled) && fields.spooled > 0 ? fields.spooled : 0,
      record: fields,
    },
  ];
}

/** The record is the store's, so untrusted: only well-typed fields, the error text redacted. */
function storeNotWritableOf(value: unknown): Pick<NodeStatus, 'storeNotWritable'> {
  if (value === null || typeof value !== 'object') return {};
  const fields = value as Record<string, unknown>;
  if (typeof fields.code !== 'string' || typeof fields.sinceAt !== 'number' || typeof fields.failures !== 'number') return {};
  return {
    storeNotWritable: {
      code: fields.code.slice(0, 32),
      sinceAt: fields.sinceAt,
      failures: fields.failures,
      lastError: typeof fields.lastError === 'string' ? redactText(fields.lastError.slice(0, 500)) : '',
    },
  };
}
