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
}

export const OWNER_FILE = 'owner.json';

export function parseOwnerRecord(text: string): OwnerRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
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
    ...(typeof record.pushPid === 'number' ? { pushPid: record.pushPid } : {}),
  };
}
