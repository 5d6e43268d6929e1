import { parseJsonObject } from '../runtime/json-object.js';

/** What a URI lock's `owner.json` says about its holder. */
export interface OwnerRecord {
  readonly version: 1;
  readonly nodeId: string;
  readonly pid: number;
  readonly host: string;
  /** Unique per acquisition: fencing compares it, so a restarted holder is a different owner. */
  readonly leaseId: string;
  /** Advanced by every heartbeat; observers judge staleness by whether it moves. */
  readonly counter: number;
  readonly uri: string;
  readonly acquiredAt: number;
  readonly heartbeatAt: number;
  /** Process group of the running `git push`, so a node on the same host can stop an orphan. */
  readonly pushPid?: number;
  /**
   * The push's start time (clock ticks after boot, /proc/<pid>/stat) and the machine's boot id:
   * together they tell that very process from a later one reusing its pid. Records written
   * before they existed lack them; such a push is never signalled.
   */
  readonly pushStartTime?: number;
  readonly bootId?: string;
}

export const OWNER_FILE = 'owner.json';

/** Longer than any boot id (a 36-character UUID): a longer string is not one. */
const MAX_BOOT_ID_LENGTH = 64;

/** The store is shared, so a record may say anything: a pid or start time is kept only when it can be one. */
function positiveInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

function boundedString(value: unknown, maxLength: number): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= maxLength ? value : undefined;
}

export function parseOwnerRecord(text: string): OwnerRecord | undefined {
  const record = parseJsonObject(text);
  if (record === undefined) return undefined;
  if (typeof record.nodeId !== 'string' || typeof record.leaseId !== 'string' || typeof record.counter !== 'number') return undefined;
  return {
    version: 1,
    nodeId: record.nodeId,
    pid: typeof record.pid === 'number' ? record.pid : 0,
    host: typeof record.host === 'string' ? record.host : '',
    leaseId: record.leaseId,
    counter: record.counter,
    uri: typeof record.uri === 'string' ? record.uri : '',
    acquiredAt: typeof record.acquiredAt === 'number' ? record.acquiredAt : 0,
    heartbeatAt: typeof record.heartbeatAt === 'number' ? record.heartbeatAt : 0,
    ...optional('pushPid', positiveInteger(record.pushPid)),
    ...optional('pushStartTime', positiveInteger(record.pushStartTime)),
    ...optional('bootId', boundedString(record.bootId, MAX_BOOT_ID_LENGTH)),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
