import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStoreProgress, type ProgressStore } from '../../../src/observe/wait-progress.js';
import type { RunningLock } from '../../../src/store/store-types.js';
import { TaskStore } from '../../../src/store/task-store.js';
import { uriKey } from '../../../src/task/task-key.js';
import { initStoreSync } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const URI = 'git://mirror.example/app.git';
const KEY = uriKey(URI);
const NOW = Date.UTC(2026, 0, 1, 12);

function storeAt(label: string): { root: string; store: TaskStore } {
  const root = tempDir(label);
  initStoreSync(root);
  return { root, store: new TaskStore({ root, nodeId: 'waiter', ifUnmarked: 'refuse' }) };
}

describe("the store's view of a destination, for refrelay wait", () => {
  it('counts its waiting tasks, and reads its retry state, its failed task of the ref and its newest push result', async () => {
    const { root, store } = storeAt('wait-progress');
    await store.create({ project: 'app', refs: ['refs/heads/main'], uri: URI, remote: 'dr' });
    await store.create({ project: 'app', refs: ['refs/heads/other'], uri: URI, remote: 'dr' });
    await store.parkFailed({ project: 'app', refs: ['refs/heads/main'], uri: URI, remote: 'dr' }, { reason: 'rejected: hook declined\nsecond line' });
    await store.writeUriState(KEY, {
      uri: 'git://bot:pw@mirror.example/app.git',
      attempts: 2,
      notBefore: NOW + 5000,
      lastError: 'fatal: https://bot:pw@x/ refused',
      nodeId: 'n1',
    });
    mkdirSync(join(root, 'history'), { recursive: true });
    const event = (at: number, kind: string) => ({ at, node: 'n1', event: kind });
    writeFileSync(
      join(root, 'history', 'n1.json'),
      JSON.stringify({ version: 1, nodeId: 'n1', uris: { [KEY]: { uri: URI, remote: 'dr', events: [event(10, 'pushed'), event(30, 'claimed')] } } }),
    );
    writeFileSync(
      join(root, 'history', 'n2.json'),
      JSON.stringify({ version: 1, nodeId: 'n2', uris: { [KEY]: { uri: URI, remote: 'dr', events: [event(20, 'push-failed')] } } }),
    );
    writeFileSync(join(root, 'history', 'n3.json'), '{not json');

    const progress = await readStoreProgress(store, root, { uriKeys: [KEY], project: 'app', ref: 'refs/heads/main' }, NOW);

    expect(progress.get(KEY)).toEqual({
      waiting: 2,
      running: false,
      backoff: {
        uriKey: KEY,
        uri: 'git://bot:***@mirror.example/app.git',
        attempts: 2,
        lastError: 'fatal: https://bot:***@x/ refused',
        nextAttemptInMs: 5000,
        nodeId: 'n1',
      },
      failed: 'rejected: hook declined',
      lastResultAt: 20,
    });
  });

  it('knows nothing of a URI the store has nothing of, and a failed task of another ref is not this one', async () => {
    const { root, store } = storeAt('wait-progress-empty');
    await store.parkFailed({ project: 'app', refs: ['refs/heads/other'], uri: URI, remote: 'dr' }, { reason: 'rejected' });
    writeFileSync(join(root, 'uri-state', `${KEY}.json`), 'garbage');
    const progress = await readStoreProgress(store, root, { uriKeys: [KEY], project: 'app', ref: 'refs/heads/main' }, NOW);
    expect(progress.get(KEY)).toEqual({ waiting: 0, running: false, backoff: undefined, failed: undefined, lastResultAt: 0 });
  });

  it("counts a lock of the URI it may not list (the daemon's user's, EACCES) as a push under way, and one that lists no task as none", async () => {
    const { root, store } = storeAt('wait-progress-unreadable');
    const lock = (unreadable: RunningLock['unreadable']): RunningLock => ({ lockName: KEY, ownerRecord: undefined, tasks: [], unreadable, mtimeMs: NOW });
    const withLock = (unreadable: RunningLock['unreadable']): ProgressStore => ({
      waitingNamesOf: (keys) => store.waitingNamesOf(keys),
      listRunning: async () => [lock(unreadable)],
      listFailed: (keys) => store.listFailed(keys),
      readUriState: (key) => store.readUriState(key),
    });
    const followed = { uriKeys: [KEY], project: 'app', ref: 'refs/heads/main' };
    expect((await readStoreProgress(withLock('whole'), root, followed, NOW)).get(KEY)?.running).toBe(true);
    expect((await readStoreProgress(withLock('part'), root, followed, NOW)).get(KEY)?.running).toBe(true);
    expect((await readStoreProgress(withLock(false), root, followed, NOW)).get(KEY)?.running).toBe(false);
  });
});
