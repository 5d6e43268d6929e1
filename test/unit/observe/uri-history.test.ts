import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HISTORY_EVENTS_PER_URI, readClusterHistory, UriHistory } from '../../../src/observe/uri-history.js';
import { FakeClock } from '../../support/fake-clock.js';

const KEY = 'a'.repeat(40);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const claimed = (oldest: number) => ({
  type: 'claimed' as const,
  remote: 'dr',
  uri: 'ssh://bot:***@host/p.git',
  uriKey: KEY,
  tasks: 2,
  oldestQueuedAtMs: oldest,
});
const pushed = {
  type: 'pushed' as const,
  pushId: 'n.1',
  remote: 'dr',
  uri: 'ssh://bot:***@host/p.git',
  uriKey: KEY,
  project: 'p',
  refs: ['refs/heads/a', 'refs/heads/b'],
  refResults: [],
  outcomes: { new: 1, updated: 1 },
  durationMs: 120.4,
  result: 'ok' as const,
  oldestQueuedAtMs: 0,
};

describe('UriHistory', () => {
  it('records queued once per oldest update, then claims and pushes, on the store clock', () => {
    const clock = new FakeClock(10_000);
    const history = new UriHistory('node-a', () => clock.now() + 500);
    history.record(claimed(9_000));
    history.record({
      type: 'retry-scheduled',
      remote: 'dr',
      uri: 'ssh://bot:***@host/p.git',
      uriKey: KEY,
      attempts: 1,
      retryInMs: 4_000,
      reason: 'connection refused',
    });
    clock.advance(4_000);
    history.record(claimed(9_000));
    history.record(pushed);
    const entry = history.entries()[KEY]!;
    expect(entry).toMatchObject({ uri: 'ssh://bot:***@host/p.git', remote: 'dr' });
    expect(entry.events.map((e) => [e.at, e.event, e.detail])).toEqual([
      [9_000, 'queued', 'oldest of the claimed updates'],
      [10_500, 'claimed', '2 tasks'],
      [10_500, 'retry-scheduled', 'attempt 1, next in 4 s: connection refused'],
      [14_500, 'claimed', '2 tasks'],
      [14_500, 'pushed', 'p: 2 refs (1 new, 1 updated) in 120 ms'],
    ]);
  });

  it(`keeps the last ${HISTORY_EVENTS_PER_URI} events of a URI`, () => {
    const history = new UriHistory('node-a', () => 0);
    for (let i = 0; i < HISTORY_EVENTS_PER_URI + 5; i++) history.record({ ...pushed, refs: Array.from({ length: i }, (_, n) => `refs/heads/r${n}`) });
    const events = history.entries()[KEY]!.events;
    expect(events).toHaveLength(HISTORY_EVENTS_PER_URI);
    expect(events[0]!.detail).toMatch(/^p: 5 refs/);
  });

  it("merges every node's file into one timeline per URI, and writes nothing when nothing changed", async () => {
    const store = mkdtempSync(join(tmpdir(), 'refrelay-history-'));
    dirs.push(store);
    mkdirSync(join(store, 'history')); // part of the store's layout (refrelay init)
    let now = 1_000;
    const a = new UriHistory('node-a', () => now);
    const b = new UriHistory('node-b', () => now);
    a.record(claimed(500));
    now = 2_000;
    b.record({ type: 'takeover', uriKey: KEY, formerNode: 'node-a', tasks: 2 });
    now = 3_000;
    b.record(pushed);
    await a.persist(store);
    await b.persist(store);
    expect(readdirSync(join(store, 'history')).sort()).toEqual(['node-a.json', 'node-b.json']);
    const merged = await readClusterHistory(store);
    expect(merged[KEY]!.remote).toBe('dr');
    expect(merged[KEY]!.events.map((e) => `${e.at} ${e.node} ${e.event}`)).toEqual([
      '500 node-a queued',
      '1000 node-a claimed',
      '2000 node-b taken-over',
      '3000 node-b pushed',
    ]);
    rmSync(join(store, 'history', 'node-a.json'));
    await a.persist(store); // unchanged since the last write: not rewritten
    expect(readdirSync(join(store, 'history'))).toEqual(['node-b.json']);
    expect(await readClusterHistory(join(store, 'missing'))).toEqual({});
  });

  it("keeps only checked fields of another node's file: a key that is no URI key, or an event of the wrong shape, is skipped", async () => {
    const store = mkdtempSync(join(tmpdir(), 'refrelay-history-'));
    dirs.push(store);
    mkdirSync(join(store, 'history'));
    const good = { at: 1_000, node: 'node-x', event: 'pushed', detail: 'p: ok' };
    const uris = {
      [KEY]: {
        uri: 'ssh://bot:secret@host/p.git',
        events: [good, { ...good, detail: 0 }, { ...good, event: '<img>' }, { ...good, at: '1' }, null, { ...good, at: 2_000, extra: '<script>' }],
      },
      'x"><img src=x onerror=alert(1)>': { events: [good] },
      ['b'.repeat(40)]: null,
      ['c'.repeat(40)]: { events: 'none' },
    };
    writeFileSync(join(store, 'history', 'node-x.json'), JSON.stringify({ uris }));
    const merged = await readClusterHistory(store);
    expect(Object.keys(merged)).toEqual([KEY]);
    expect(merged[KEY]!.uri).toBe('ssh://bot:***@host/p.git');
    expect(merged[KEY]!.events).toEqual([good, { at: 2_000, node: 'node-x', event: 'pushed', detail: 'p: ok' }]);
  });

  it('reads at most 256 files of history/ per view, in name order: a folder anyone may fill costs a bounded read', async () => {
    const store = mkdtempSync(join(tmpdir(), 'refrelay-history-'));
    dirs.push(store);
    mkdirSync(join(store, 'history'));
    const event = { at: 1_000, node: 'n', event: 'pushed' };
    for (let i = 0; i < 300; i++) {
      const key = i.toString(16).padStart(40, '0');
      writeFileSync(join(store, 'history', `n${String(i).padStart(3, '0')}.json`), JSON.stringify({ uris: { [key]: { events: [event] } } }));
    }
    const merged = await readClusterHistory(store);
    expect(Object.keys(merged)).toHaveLength(256);
    expect(merged[(255).toString(16).padStart(40, '0')]).toBeDefined();
    expect(merged[(256).toString(16).padStart(40, '0')]).toBeUndefined();
  });

  it('reads the files of nodes with a record in nodes/ before the others, so 256 planted files sorting first cannot hide them', async () => {
    const store = mkdtempSync(join(tmpdir(), 'refrelay-history-'));
    dirs.push(store);
    mkdirSync(join(store, 'history'));
    mkdirSync(join(store, 'nodes'));
    const event = { at: 1_000, node: 'n', event: 'pushed' };
    for (let i = 0; i < 256; i++) {
      writeFileSync(join(store, 'history', `a${String(i).padStart(3, '0')}.json`), JSON.stringify({ uris: { ['b'.repeat(40)]: { events: [event] } } }));
    }
    writeFileSync(join(store, 'history', 'node-1.json'), JSON.stringify({ uris: { [KEY]: { events: [{ ...event, node: 'node-1' }] } } }));
    writeFileSync(join(store, 'nodes', 'node-1.json'), '{}');
    const merged = await readClusterHistory(store);
    expect(merged[KEY]?.events).toEqual([{ ...event, node: 'node-1' }]);
  });
});
