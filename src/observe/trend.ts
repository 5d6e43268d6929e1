import { STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { parseJsonObject, keyedRecord } from '../runtime/json-object.js';
import { eachHistoryFile, replaceHistoryFile } from './uri-history.js';

/** Minutes a node keeps and the page draws: the last hour. */
export const TREND_MINUTES = 60;
const MINUTE_MS = 60_000;
/** Remotes kept per minute: a file with more is cut, not trusted. */
const TREND_REMOTES = 50;
const SUFFIX = '.trend.json';

/** One minute of one node: counts per remote. */
export interface TrendMinute {
  /** Start of the minute, store clock, ms. */
  readonly at: number;
  /** Waiting tasks in the whole cluster, as the node's last count in the minute saw them. */
  readonly waiting: Readonly<Record<string, number>>;
  /** git pushes this node ran, and how many of them failed. */
  readonly pushes: Readonly<Record<string, number>>;
  readonly failures: Readonly<Record<string, number>>;
}

/** The cluster's last hour, minute by minute, oldest first: what the page draws. */
export interface ClusterTrend {
  /** Start of each minute, store clock. */
  readonly minutes: readonly number[];
  readonly remotes: readonly string[];
  /** Per remote, per minute: null where no node counted the queue in that minute. */
  readonly waiting: Readonly<Record<string, readonly (number | null)[]>>;
  readonly pushes: Readonly<Record<string, readonly number[]>>;
  readonly failures: Readonly<Record<string, readonly number[]>>;
}

function minuteOf(at: number): number {
  return Math.floor(at / MINUTE_MS) * MINUTE_MS;
}

/** One node's last hour, kept in memory and written to `history/<node>.trend.json` with its queue summary. */
export class MinuteTrend {
  private readonly minutes: { at: number; waiting: Record<string, number>; pushes: Record<string, number>; failures: Record<string, number> }[] = [];

  constructor(private readonly storeNow: () => number) {}

  recordPush(remote: string, failed: boolean): void {
    const minute = this.current();
    minute.pushes[remote] = (minute.pushes[remote] ?? 0) + 1;
    if (failed) minute.failures[remote] = (minute.failures[remote] ?? 0) + 1;
  }

  /** The queue's size per remote now: the minute keeps the last count made in it. */
  sampleWaiting(byRemote: Readonly<Record<string, number>>): void {
    this.current().waiting = Object.assign(keyedRecord<number>(), byRemote);
  }

  snapshot(): TrendMinute[] {
    this.current();
    return this.minutes.map((minute) => ({ ...minute }));
  }

  private current(): (typeof this.minutes)[number] {
    const at = minuteOf(this.storeNow());
    const last = this.minutes.at(-1);
    if (last?.at === at) return last;
    const minute = { at, waiting: keyedRecord<number>(), pushes: keyedRecord<number>(), failures: keyedRecord<number>() };
    this.minutes.push(minute);
    while (this.minutes.length > 0 && this.minutes[0]!.at <= at - TREND_MINUTES * MINUTE_MS) this.minutes.shift();
    return minute;
  }
}

export function persistTrend(storePath: string, nodeId: string, minutes: readonly TrendMinute[]): Promise<void> {
  return replaceHistoryFile(storePath, nodeId, `${nodeId}${SUFFIX}`, { version: 1, nodeId, minutes });
}

export function isTrendName(name: string): boolean {
  return name.endsWith(SUFFIX);
}

function counts(value: unknown): Record<string, number> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out = keyedRecord<number>();
  for (const [remote, count] of Object.entries(value as Record<string, unknown>).slice(0, TREND_REMOTES)) {
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) return undefined;
    out[remote] = count;
  }
  return out;
}

/** The well-formed minutes of a trend file; anything else in it is left out (the store is anyone's to write). */
export function parseTrend(text: string): TrendMinute[] {
  const minutes = parseJsonObject(text)?.minutes;
  if (!Array.isArray(minutes)) return [];
  return minutes.slice(-TREND_MINUTES).flatMap((value: unknown) => {
    const fields = (value ?? {}) as Record<string, unknown>;
    const [waiting, pushes, failures] = [counts(fields.waiting), counts(fields.pushes), counts(fields.failures)];
    if (typeof fields.at !== 'number' || !Number.isFinite(fields.at) || !waiting || !pushes || !failures) return [];
    return [{ at: minuteOf(fields.at), waiting, pushes, failures }];
  });
}

/** Every node's trend file that reads. */
export async function readTrends(storePath: string): Promise<TrendMinute[][]> {
  const trends: TrendMinute[][] = [];
  await eachHistoryFile(storePath, isTrendName, STORE_RECORD_MAX_BYTES, (text) => {
    const minutes = parseTrend(text);
    if (minutes.length > 0) trends.push(minutes);
  });
  return trends;
}

/**
 * The last TREND_MINUTES minutes up to `storeNow`: pushes and failures summed over the nodes;
 * waiting, which every node counts for the whole cluster, the largest count of the minute.
 */
export function mergeTrends(perNode: readonly (readonly TrendMinute[])[], storeNow: number): ClusterTrend {
  const last = minuteOf(storeNow);
  const minutes = Array.from({ length: TREND_MINUTES }, (_, i) => last - (TREND_MINUTES - 1 - i) * MINUTE_MS);
  const index = new Map(minutes.map((at, i) => [at, i]));
  const waiting = keyedRecord<(number | null)[]>();
  const pushes = keyedRecord<number[]>();
  const failures = keyedRecord<number[]>();
  const row = <T>(table: Record<string, T[]>, remote: string, fill: T): T[] => (table[remote] ??= minutes.map(() => fill));
  for (const node of perNode) {
    for (const minute of node) {
      const i = index.get(minuteOf(minute.at));
      if (i === undefined) continue;
      for (const [remote, count] of Object.entries(minute.waiting)) {
        const series = row(waiting, remote, null);
        series[i] = Math.max(series[i] ?? 0, count);
      }
      for (const [remote, count] of Object.entries(minute.pushes)) row(pushes, remote, 0)[i]! += count;
      for (const [remote, count] of Object.entries(minute.failures)) row(failures, remote, 0)[i]! += count;
    }
  }
  const remotes = [...new Set([...Object.keys(waiting), ...Object.keys(pushes), ...Object.keys(failures)])].sort();
  return { minutes, remotes, waiting, pushes, failures };
}
