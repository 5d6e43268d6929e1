import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { replaceJsonFile } from '../runtime/replace-json-file.js';
import { readBoundedText, STORE_REPORT_MAX_BYTES } from '../runtime/bounded-read.js';
import { join } from 'node:path';
import type { ReplicationEvent } from '../schedule/events.js';
import { asJsonObject, parseJsonObject, keyedRecord } from '../runtime/json-object.js';
import { StorePaths, URI_KEY_PATTERN } from '../store/store-paths.js';
import { plural } from '../runtime/plural.js';
import { redactUrl } from '../runtime/redact.js';

/** Events kept per URI, and URIs kept per node (the least recently active are dropped). */
export const HISTORY_EVENTS_PER_URI = 20;
const HISTORY_URIS_PER_NODE = 500;

const EVENT_NAMES = ['queued', 'claimed', 'pushed', 'push-failed', 'retry-scheduled', 'failed', 'taken-over'] as const;

export interface HistoryEvent {
  /** Store-clock time, ms since the epoch: the same clock for every node's events. */
  readonly at: number;
  readonly node: string;
  readonly event: (typeof EVENT_NAMES)[number];
  readonly detail?: string;
}

export interface UriHistoryEntry {
  readonly uri: string | null;
  readonly remote: string | null;
  readonly events: readonly HistoryEvent[];
}

/** The history folder of the store: one file per node, each node writing only its own. */
export function historyDir(storePath: string): string {
  return join(storePath, 'history');
}

/**
 * This node's recent events per URI, written to `history/<node>.json` now and then, so `status`
 * on any machine can merge every node's file into one timeline per URI. A node only ever
 * replaces its own file (temp + rename): no two writers share a file on the network filesystem.
 */
export class UriHistory {
  private readonly byUri = new Map<string, { uri: string | null; remote: string | null; events: HistoryEvent[] }>();
  private changed = false;

  constructor(
    private readonly nodeId: string,
    private readonly storeNow: () => number,
  ) {}

  record(event: ReplicationEvent): void {
    switch (event.type) {
      case 'claimed': {
        const { uriKey, uri, remote } = event;
        // Claims after a retry find the same oldest update: it was queued once.
        if (!this.byUri.get(uriKey)?.events.some((e) => e.event === 'queued' && e.at === event.oldestQueuedAtMs)) {
          this.add(uriKey, uri, remote, 'queued', 'oldest of the claimed updates', event.oldestQueuedAtMs);
        }
        this.add(uriKey, uri, remote, 'claimed', plural(event.tasks, 'task'));
        break;
      }
      case 'pushed': {
        const counts = Object.entries(event.outcomes)
          .map(([status, count]) => `${count} ${status}`)
          .join(', ');
        const detail = `${event.project}: ${plural(event.refs.length, 'ref')}${counts === '' ? '' : ` (${counts})`} in ${Math.round(event.durationMs)} ms${event.failure === undefined ? '' : ` — ${event.failure}`}`;
        this.add(event.uriKey, event.uri, event.remote, event.result === 'failed' ? 'push-failed' : 'pushed', detail);
        break;
      }
      case 'retry-scheduled':
        this.add(
          event.uriKey,
          event.uri,
          event.remote,
          'retry-scheduled',
          `attempt ${event.attempts}, next in ${Math.round(event.retryInMs / 1000)} s: ${event.reason}`,
        );
        break;
      case 'task-failed':
        this.add(event.uriKey, event.uri, event.remote, 'failed', `${plural(event.tasks, 'task')} to failed/: ${event.reason}`);
        break;
      case 'takeover':
        this.add(event.uriKey, null, null, 'taken-over', `from ${event.formerNode ?? 'an unknown node'}, ${plural(event.tasks, 'task')} back to waiting`);
        break;
      default:
        break;
    }
  }

  entries(): Record<string, UriHistoryEntry> {
    return Object.fromEntries(this.byUri);
  }

  /** Writes `history/<node>.json` when something changed since the last write. */
  async persist(storePath: string): Promise<void> {
    if (!this.changed) return;
    this.changed = false;
    try {
      await replaceHistoryFile(storePath, this.nodeId, `${this.nodeId}.json`, { version: 1, nodeId: this.nodeId, uris: this.entries() });
    } catch (error) {
      this.changed = true;
      throw error;
    }
  }

  /** An event of this node, at `at` (store clock; now unless given). */
  private add(uriKey: string, uri: string | null, remote: string | null, kind: HistoryEvent['event'], detail: string, at = this.storeNow()): void {
    const event: HistoryEvent = { at, node: this.nodeId, event: kind, detail };
    const existing = this.byUri.get(uriKey);
    const entry = existing ?? { uri, remote, events: [] };
    if (entry.uri === null && uri !== null) entry.uri = uri;
    if (entry.remote === null && remote !== null) entry.remote = remote;
    entry.events.push(event);
    if (entry.events.length > HISTORY_EVENTS_PER_URI) entry.events.splice(0, entry.events.length - HISTORY_EVENTS_PER_URI);
    // Re-insert: the Map's order is then least recently active first.
    this.byUri.delete(uriKey);
    this.byUri.set(uriKey, entry);
    if (this.byUri.size > HISTORY_URIS_PER_NODE) this.byUri.delete(this.byUri.keys().next().value as string);
    this.changed = true;
  }
}

/** Replaces `history/<name>` with `record` as JSON (temp `.<nodeId>.<hex>.tmp` + rename). */
export async function replaceHistoryFile(storePath: string, nodeId: string, name: string, record: unknown): Promise<void> {
  const dir = historyDir(storePath);
  await replaceJsonFile(join(dir, `.${nodeId}.${randomBytes(4).toString('hex')}.tmp`), join(dir, name), record);
}

/**
 * Files one view reads from `history/` and their bytes in all: a cluster writes three small files
 * a node, and a folder anyone may fill must not cost a node its memory.
 */
const HISTORY_FILES_READ = 256;
const HISTORY_BYTES_READ = 128 * 1024 * 1024;

/**
 * Hands the text of each `history/` file `wanted` picks to `use`, one file at a time (a node's
 * history may be 16 MiB), at most HISTORY_FILES_READ of them and HISTORY_BYTES_READ in all: first
 * the files of nodes with a record in `nodes/`, then the others, each in name order, so files
 * planted in `history/` alone cannot crowd the cluster's own out. Dot names are temps; a file that
 * vanished, is too big or is not a file is skipped: the other nodes' files still count (the store
 * is anyone's to write).
 */
export async function eachHistoryFile(storePath: string, wanted: (name: string) => boolean, maxBytes: number, use: (text: string) => void): Promise<void> {
  const dir = historyDir(storePath);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => wanted(name) && !name.startsWith('.'));
  } catch {
    return;
  }
  const nodeRecords = new Set(await readdir(new StorePaths(storePath).nodes).catch(() => []));
  const ofNode = (name: string): number => (nodeRecords.has(`${name.replace(/(\.queue|\.trend)?\.json$/, '')}.json`) ? 0 : 1);
  const ordered = names.sort((a, b) => ofNode(a) - ofNode(b) || (a < b ? -1 : a > b ? 1 : 0));
  let bytes = 0;
  for (const name of ordered.slice(0, HISTORY_FILES_READ)) {
    if (bytes >= HISTORY_BYTES_READ) break;
    const text = await readBoundedText(join(dir, name), maxBytes).catch(() => undefined);
    if (text === undefined) continue;
    bytes += text.length;
    use(text);
  }
}

/** One event of a history file, with only the fields it may have, of their types; undefined when it is not one. */
function historyEvent(value: unknown): HistoryEvent | undefined {
  const event = asJsonObject(value);
  if (event === undefined) return undefined;
  const { at, node, detail } = event;
  const name = EVENT_NAMES.find((known) => known === event.event);
  if (typeof at !== 'number' || !Number.isFinite(at) || typeof node !== 'string' || name === undefined) return undefined;
  if (detail !== undefined && typeof detail !== 'string') return undefined;
  return detail === undefined ? { at, node, event: name } : { at, node, event: name, detail };
}

/** A node's history file: the queue summaries and minute trends of the nodes share the folder (queue-summary.ts, trend.ts). */
const isHistoryName = (name: string): boolean => name.endsWith('.json') && !name.endsWith('.queue.json') && !name.endsWith('.trend.json');

/** Every node's history file merged: per URI the last HISTORY_EVENTS_PER_URI events, oldest first. */
export async function readClusterHistory(storePath: string): Promise<Record<string, UriHistoryEntry>> {
  const merged = new Map<string, { uri: string | null; remote: string | null; events: HistoryEvent[] }>();
  await eachHistoryFile(storePath, isHistoryName, STORE_REPORT_MAX_BYTES, (text) => {
    const uris = parseJsonObject(text)?.uris;
    if (uris === null || typeof uris !== 'object') return;
    for (const [uriKey, value] of Object.entries(uris as Record<string, unknown>)) {
      // Another node's file is anyone's to write: a key that is no URI key, or an entry or event
      // of the wrong shape, is skipped; only checked fields are kept (they reach the page).
      const entry = asJsonObject(value);
      if (!URI_KEY_PATTERN.test(uriKey) || entry === undefined || !Array.isArray(entry.events)) continue;
      const target = merged.get(uriKey) ?? { uri: null, remote: null, events: [] };
      if (target.uri === null && typeof entry.uri === 'string') target.uri = redactUrl(entry.uri);
      if (target.remote === null && typeof entry.remote === 'string') target.remote = entry.remote;
      for (const event of entry.events as unknown[]) {
        const checked = historyEvent(event);
        if (checked !== undefined) target.events.push(checked);
      }
      merged.set(uriKey, target);
    }
  });
  const result = keyedRecord<UriHistoryEntry>();
  for (const [uriKey, entry] of merged) {
    entry.events.sort((a, b) => a.at - b.at);
    result[uriKey] = { uri: entry.uri, remote: entry.remote, events: entry.events.slice(-HISTORY_EVENTS_PER_URI) };
  }
  return result;
}
