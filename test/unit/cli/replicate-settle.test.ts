import { describe, expect, it } from 'vitest';
import { settle, type SettleStore, type Tracked } from '../../../src/cli/replicate-settle.js';
import type { FailedTask, FailureRecord, RunningLock } from '../../../src/store/store-types.js';
import { uriKey, type Task } from '../../../src/task/task.js';

const URI = 'git://127.0.0.1:9/p07.git';
const TASK: Task = { project: 'p07', refs: ['refs/heads/main'], uri: URI, remote: 'down' };

/** A store whose listings are set by the test between passes. */
function storeWith(listing: { waiting: string[]; failed: FailedTask[]; running?: RunningLock[]; flat?: string[] }): SettleStore {
  return {
    waitingNamesOf: async () => new Set(listing.waiting),
    flatWaitingNames: async (names) => new Set([...names].filter((name) => listing.flat?.includes(name))),
    listRunning: async () => listing.running ?? [],
    listFailed: async () => listing.failed,
  };
}

const failedTask = (reason: FailureRecord | undefined): FailedTask => ({ name: 'k1.json', key: 'k1', task: TASK, mtimeMs: 0, uriKey: uriKey(URI), reason });
const tracked = (): Tracked[] => [{ key: 'k1', uri: URI, uriKey: uriKey(URI), state: 'queued' }];

describe('following a full sync to its end', () => {
  it('a task seen in failed/ before its reason record waits one pass and then reports the recorded reason', async () => {
    const listing = { waiting: [] as string[], failed: [failedTask(undefined)] };
    const items = tracked();
    await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'queued' });
    listing.failed = [failedTask({ reason: 'gave up after 2 attempts: unable to connect', at: 1, nodeId: 'n1' })];
    await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'failed', reason: 'gave up after 2 attempts: unable to connect' });
  });

  it('a failed task whose reason never comes is reported as failed without one on the second pass', async () => {
    const store = storeWith({ waiting: [], failed: [failedTask(undefined)] });
    const items = tracked();
    await settle(store, items, 0);
    await settle(store, items, 0);
    expect(items[0]).toMatchObject({ state: 'failed', reason: 'failed (no reason recorded)' });
  });

  it('a task is done only after two passes that find it in neither waiting/, running/ nor failed/', async () => {
    const listing = { waiting: ['k1.json'], failed: [] as FailedTask[] };
    const items = tracked();
    await settle(storeWith(listing), items, 0);
    listing.waiting = [];
    await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'queued' });
    await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'done' });
  });

  it('a task is not done while a lock of its URI stands that this user may not list (EACCES): it may hold the task', async () => {
    const unreadable: RunningLock = { lockName: uriKey(URI), ownerRecord: undefined, tasks: [], unreadable: 'whole', mtimeMs: 0 };
    const listing = { waiting: [] as string[], failed: [] as FailedTask[], running: [unreadable] };
    const items = tracked();
    for (let pass = 0; pass < 3; pass++) await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'queued' });
    listing.running = [];
    await settle(storeWith(listing), items, 0);
    await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'done' });
  });

  it('a task that waits flat at the top of waiting/ (sent there past a stale view of its folder) is not done until it leaves', async () => {
    const listing = { waiting: [] as string[], failed: [] as FailedTask[], flat: ['k1.json'] };
    const items = tracked();
    for (let pass = 0; pass < 3; pass++) await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'queued' });
    listing.flat = [];
    await settle(storeWith(listing), items, 0);
    await settle(storeWith(listing), items, 0);
    expect(items[0]).toMatchObject({ state: 'done' });
  });
});
