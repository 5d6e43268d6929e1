import { STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';
import { asJsonObject, parseJsonObject, keyedRecord } from '../runtime/json-object.js';
import { redactUrl } from '../runtime/redact.js';
import { URI_KEY_PATTERN } from '../store/store-paths.js';
import type { WaitingUri } from '../schedule/waiting-uris.js';
import { uriKey as computeUriKey } from '../task/task.js';
import { eachHistoryFile, replaceHistoryFile } from './uri-history.js';

/** How often a node writes its summary. */
export const QUEUE_SUMMARY_EVERY_MS = 5000;
/** The URIs a summary names one by one, the longest waiting first. */
export const QUEUE_SUMMARY_URIS = 200;
const SUFFIX = '.queue.json';

/** One remote's waiting work as a node's last pass counted it. */
export interface QueueRemoteSummary {
  readonly uris: number;
  readonly tasks: number;
  /** Store clock; null when nothing waits. */
  readonly oldestMtimeMs: number | null;
}

export interface QueueSummaryUri {
  readonly remote: string;
  /** Redacted. */
  readonly uri: string;
  readonly uriKey: string;
  readonly tasks: number;
  readonly oldestMtimeMs: number;
}

/**
 * `history/<nodeId>.queue.json`: the whole queue as one node learned it (DESIGN.md "Waiting
 * folders"), so that `status` on any machine reads one small file instead of every waiting folder.
 * Counts are those of the node's folders as learned: tasks that joined a folder since are not in them.
 */
export interface QueueSummary {
  readonly version: 1;
  readonly nodeId: string;
  /** Store clock. */
  readonly writtenAt: number;
  /** False while the node has folders it has not read yet: its counts then miss them. */
  readonly complete: boolean;
  readonly remotes: Readonly<Record<string, QueueRemoteSummary>>;
  readonly oldest: readonly QueueSummaryUri[];
}

/**
 * Per remote totals and the QUEUE_SUMMARY_URIS longest-waiting URIs of a pass's count, in one
 * pass over it that keeps only those URIs: a count of 100,000 URIs is never held at once (held
 * across a scrape's reads of the store, it would outlive the young generation and swell the heap).
 */
export function summarizeQueue(nodeId: string, waiting: Iterable<WaitingUri>, complete: boolean, writtenAt: number): QueueSummary {
  const remotes = keyedRecord<{ uris: number; tasks: number; oldestMtimeMs: number | null }>();
  const longest: WaitingUri[] = [];
  for (const uri of waiting) {
    const { remote, waiting: tasks, oldestMtimeMs } = uri;
    const totals = (remotes[remote] ??= { uris: 0, tasks: 0, oldestMtimeMs: null });
    totals.uris++;
    totals.tasks += tasks;
    if (totals.oldestMtimeMs === null || oldestMtimeMs < totals.oldestMtimeMs) totals.oldestMtimeMs = oldestMtimeMs;
    keepOldest(longest, uri);
  }
  const oldest = longest.map(({ remote, uri, waiting: tasks, oldestMtimeMs }) => ({
    remote,
    uri: redactUrl(uri),
    uriKey: computeUriKey(uri),
    tasks,
    oldestMtimeMs,
  }));
  return { version: 1, nodeId, writtenAt, complete, remotes, oldest };
}

/** Inserts `uri` into `longest` (oldest first, at most QUEUE_SUMMARY_URIS), after those as old: the count's order breaks ties. */
function keepOldest(longest: WaitingUri[], uri: WaitingUri): void {
  if (longest.length === QUEUE_SUMMARY_URIS && uri.oldestMtimeMs >= longest.at(-1)!.oldestMtimeMs) return;
  let low = 0;
  let high = longest.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (longest[middle]!.oldestMtimeMs <= uri.oldestMtimeMs) low = middle + 1;
    else high = middle;
  }
  longest.splice(low, 0, uri);
  if (longest.length > QUEUE_SUMMARY_URIS) longest.pop();
}

/** Temp + rename, so readers see the old summary or the new one. */
export function persistQueueSummary(storePath: string, summary: QueueSummary): Promise<void> {
  return replaceHistoryFile(storePath, summary.nodeId, `${summary.nodeId}${SUFFIX}`, summary);
}

export function isQueueSummaryName(name: string): boolean {
  return name.endsWith(SUFFIX);
}

/** Every node's summary that parses; anything else there is skipped (the store is anyone's to write). */
export async function readQueueSummaries(storePath: string): Promise<QueueSummary[]> {
  const summaries: QueueSummary[] = [];
  await eachHistoryFile(storePath, isQueueSummaryName, STORE_RECORD_MAX_BYTES, (text) => {
    const summary = parseQueueSummary(text);
    if (summary !== undefined) summaries.push(summary);
  });
  return summaries;
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isUriKey = (value: unknown): value is string => typeof value === 'string' && URI_KEY_PATTERN.test(value);

/** Only well-typed fields make a summary; the URIs are redacted again, whatever the file says. */
export function parseQueueSummary(text: string): QueueSummary | undefined {
  const fields = parseJsonObject(text);
  if (fields === undefined) return undefined;
  if (fields.version !== 1 || typeof fields.nodeId !== 'string' || !isTime(fields.writtenAt) || typeof fields.complete !== 'boolean') return undefined;
  if (fields.remotes === null || typeof fields.remotes !== 'object' || !Array.isArray(fields.oldest)) return undefined;
  const remotes = keyedRecord<QueueRemoteSummary>();
  for (const [remote, value] of Object.entries(fields.remotes as Record<string, unknown>)) {
    const totals = asJsonObject(value);
    if (totals === undefined || !isCount(totals.uris) || !isCount(totals.tasks)) return undefined;
    remotes[remote] = { uris: totals.uris, tasks: totals.tasks, oldestMtimeMs: isTime(totals.oldestMtimeMs) ? totals.oldestMtimeMs : null };
  }
  const oldest: QueueSummaryUri[] = [];
  for (const value of fields.oldest.slice(0, QUEUE_SUMMARY_URIS)) {
    const entry = asJsonObject(value);
    if (entry === undefined) return undefined;
    const { remote, uri, uriKey, tasks, oldestMtimeMs } = entry;
    if (typeof remote !== 'string' || typeof uri !== 'string' || !isUriKey(uriKey) || !isCount(tasks) || !isTime(oldestMtimeMs)) return undefined;
    oldest.push({ remote, uri: redactUrl(uri), uriKey, tasks, oldestMtimeMs });
  }
  return { version: 1, nodeId: fields.nodeId, writtenAt: fields.writtenAt, complete: fields.complete, remotes, oldest };
}

/**
 * The summary `status` can count the queue from: the newest complete one of a node that is alive,
 * written within `maxAgeMs` of `storeNow`; undefined when there is none (then the store is listed).
 */
export function freshestSummary(summaries: readonly QueueSummary[], alive: ReadonlySet<string>, storeNow: number, maxAgeMs: number): QueueSummary | undefined {
  let best: QueueSummary | undefined;
  for (const summary of summaries) {
    // abs: one written further ahead than maxAgeMs (a skewed clock, a planted file) would win every time.
    if (!summary.complete || !alive.has(summary.nodeId) || Math.abs(storeNow - summary.writtenAt) > maxAgeMs) continue;
    if (best === undefined || summary.writtenAt > best.writtenAt) best = summary;
  }
  return best;
}

/** How many URIs a summary counted in all. */
export function summaryUris(summary: QueueSummary): number {
  return Object.values(summary.remotes).reduce((sum, remote) => sum + remote.uris, 0);
}
