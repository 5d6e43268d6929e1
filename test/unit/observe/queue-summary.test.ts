import { describe, expect, it } from 'vitest';
import { freshestSummary, parseQueueSummary, QUEUE_SUMMARY_URIS, summarizeQueue, type QueueSummary } from '../../../src/observe/queue-summary.js';
import { uriKey } from '../../../src/task/task.js';

const uri = (i: number): string => `https://user:secret@git.example.com/p${i}.git`;

describe('queue summaries', () => {
  it('count every URI per remote and name the longest-waiting ones, their URLs redacted', () => {
    const waiting = Array.from({ length: QUEUE_SUMMARY_URIS + 50 }, (_, i) => ({
      remote: i % 2 === 0 ? 'dr' : 'ci',
      uri: uri(i),
      waiting: 3,
      oldestMtimeMs: 10_000 - i,
    }));
    const summary = summarizeQueue('node-a', waiting, true, 99_000);
    expect(summary.remotes).toEqual({ dr: { uris: 125, tasks: 375, oldestMtimeMs: 10_000 - 248 }, ci: { uris: 125, tasks: 375, oldestMtimeMs: 10_000 - 249 } });
    expect(summary.oldest).toHaveLength(QUEUE_SUMMARY_URIS);
    expect(summary.oldest[0]).toEqual({
      remote: 'ci',
      uri: 'https://user:***@git.example.com/p249.git',
      uriKey: uriKey(uri(249)),
      tasks: 3,
      oldestMtimeMs: 10_000 - 249,
    });
    expect(JSON.stringify(summary)).not.toContain('secret');
    expect(parseQueueSummary(JSON.stringify(summary))).toEqual(summary);
  });

  it('keep a remote named __proto__ (a refused task file says anything) as a remote, never reaching Object.prototype', () => {
    const waiting = [{ remote: '__proto__', uri: uri(1), waiting: 3, oldestMtimeMs: 7 }];
    const summary = summarizeQueue('node-a', waiting, true, 99_000);
    expect(Object.entries(summary.remotes)).toEqual([['__proto__', { uris: 1, tasks: 3, oldestMtimeMs: 7 }]]);
    expect(Object.entries(parseQueueSummary(JSON.stringify(summary))!.remotes)).toEqual([['__proto__', { uris: 1, tasks: 3, oldestMtimeMs: 7 }]]);
    expect(({} as Record<string, unknown>).uris).toBeUndefined();
  });

  it('name the same longest-waiting URIs as a stable sort of the whole count, read in one pass over any order', () => {
    // A scrambled order with many ties: the kept URIs are a full sort's first ones, ties in count order.
    const waiting = Array.from({ length: 5 * QUEUE_SUMMARY_URIS }, (_, i) => ({
      remote: 'dr',
      uri: uri((i * 7919) % 1000),
      waiting: 1,
      oldestMtimeMs: (i * 31) % 97,
    }));
    const expected = [...waiting].sort((a, b) => a.oldestMtimeMs - b.oldestMtimeMs).slice(0, QUEUE_SUMMARY_URIS);
    const summary = summarizeQueue('node-a', waiting.values(), true, 1);
    expect(summary.oldest.map((item) => [item.uriKey, item.oldestMtimeMs])).toEqual(expected.map((item) => [uriKey(item.uri), item.oldestMtimeMs]));
    expect(summary.remotes.dr!.uris).toBe(5 * QUEUE_SUMMARY_URIS);
  });

  it('refuse a file of another shape, and redact the URLs a file names whatever it says', () => {
    const good = summarizeQueue('node-a', [{ remote: 'dr', uri: uri(1), waiting: 1, oldestMtimeMs: 5 }], true, 10);
    expect(parseQueueSummary('not json')).toBeUndefined();
    expect(parseQueueSummary(JSON.stringify({ ...good, version: 2 }))).toBeUndefined();
    expect(parseQueueSummary(JSON.stringify({ ...good, remotes: { dr: { uris: -1, tasks: 1 } } }))).toBeUndefined();
    expect(parseQueueSummary(JSON.stringify({ ...good, oldest: [{ remote: 'dr' }] }))).toBeUndefined();
    const planted = parseQueueSummary(JSON.stringify({ ...good, oldest: [{ ...good.oldest[0], uri: uri(7) }] }));
    expect(planted?.oldest[0]?.uri).toBe('https://user:***@git.example.com/p7.git');
  });

  it('come from a live node with a complete count written lately, the newest first', () => {
    const summary = (nodeId: string, writtenAt: number, complete = true): QueueSummary => ({ ...summarizeQueue(nodeId, [], complete, writtenAt) });
    const alive = new Set(['a', 'b', 'c']);
    const all = [summary('a', 1000), summary('b', 1500), summary('c', 1900, false), summary('dead', 2000)];
    expect(freshestSummary(all, alive, 2000, 1000)?.nodeId).toBe('b');
    expect(freshestSummary(all, alive, 2600, 1000)).toBeUndefined();
    expect(freshestSummary([], alive, 2000, 1000)).toBeUndefined();
    // One claiming to be written far ahead (a planted file, a skewed clock) never wins.
    expect(freshestSummary([...all, summary('a', 9e15)], alive, 2000, 1000)?.nodeId).toBe('b');
  });
});
