import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpoolForwarder } from '../../../src/daemon/spool-forwarder.js';
import { spoolDirFor, spoolTasks, spooledNames } from '../../../src/intake/spool.js';
import { silentLog } from '../../../src/observe/log.js';
import { TaskStore } from '../../../src/store/task-store.js';
import { taskKey, type Task } from '../../../src/task/task.js';
import { initStoreSync, storeDir } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

function setUp(): { store: string; spool: string; taskStore: TaskStore; forwarder: SpoolForwarder } {
  const root = tempDir('refrelay-forward');
  const store = join(root, 'store');
  mkdirSync(store); // an empty mount point: no marker yet
  const spool = spoolDirFor(join(root, 'spool'), store);
  const taskStore = new TaskStore({ root: store, nodeId: 'node-1', ifUnmarked: 'refuse' });
  const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 0 });
  return { store, spool, taskStore, forwarder };
}

const tasks = (count: number): Task[] =>
  Array.from({ length: count }, (_, i) => ({ project: `team/p${i}`, refs: ['refs/heads/main'], uri: `/dest/team/p${i}.git`, remote: 'mirror' }));

describe('forwarding the spool into the store', () => {
  it('keeps every spooled task while the store is missing, then forwards 1,000 within 5 s once it is back, keeping their enqueue times', async () => {
    const { store, spool, forwarder } = setUp();
    const enqueuedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    const queued = tasks(1000);
    await spoolTasks(spool, store, queued, enqueuedAt);

    await expect(forwarder.tick()).rejects.toThrow(/refrelay-store\.json is missing/);
    expect(await spooledNames(spool)).toHaveLength(1000);
    expect(forwarder.waiting).toBe(1000);
    expect(readdirSync(store)).toEqual([]);

    initStoreSync(store);
    const startedAt = performance.now();
    expect(await forwarder.tick()).toEqual({ forwarded: 1000, quarantined: 0 });
    const elapsedMs = performance.now() - startedAt;
    console.info(`spool: forwarded 1000 tasks into the store in ${Math.round(elapsedMs)} ms`);
    expect(elapsedMs).toBeLessThan(5000);

    const waiting = readdirSync(storeDir(store, 'waiting')).sort();
    expect(waiting).toEqual(queued.map((task) => `${taskKey(task)}.json`).sort());
    for (const name of waiting.slice(0, 20)) expect(statSync(join(storeDir(store, 'waiting'), name)).mtimeMs).toBe(enqueuedAt.getTime());
    expect(await spooledNames(spool)).toEqual([]);
    expect(forwarder.waiting).toBe(0);
    expect(readdirSync(storeDir(store, 'building'))).toEqual([]);
  });

  it('leaves a task already queued in the store as it was (the first file and mtime stay) and still empties the spool', async () => {
    const { store, spool, taskStore, forwarder } = setUp();
    initStoreSync(store);
    const [task] = tasks(1);
    await taskStore.create(task!);
    const firstMtime = statSync(join(storeDir(store, 'waiting'), `${taskKey(task!)}.json`)).mtimeMs;
    await spoolTasks(spool, store, [task!], new Date(Date.now() - 3_600_000));

    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0 });
    expect(statSync(join(storeDir(store, 'waiting'), `${taskKey(task!)}.json`)).mtimeMs).toBe(firstMtime);
    expect(await spooledNames(spool)).toEqual([]);
  });

  it('publishes a spooled task backdated to its enqueue time on the store clock', async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 30_000 });
    const enqueuedAt = new Date(1_700_000_000_000);
    const [task] = tasks(1);
    await spoolTasks(spool, store, [task!], enqueuedAt);
    await forwarder.tick();
    expect(statSync(join(storeDir(store, 'waiting'), `${taskKey(task!)}.json`)).mtimeMs).toBe(enqueuedAt.getTime() + 30_000);
  });
});
