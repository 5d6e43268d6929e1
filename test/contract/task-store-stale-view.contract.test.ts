import { describe, expect, it } from 'vitest';
import type { StoreEvent } from '../../src/store/task-store.js';
import { encodeTask, uriKey, type Task } from '../../src/task/task.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { WAITING, fileOf, waitingFiles, waitingRel } from './support/waiting-layout.js';

/**
 * DESIGN.md "Waiting folders", Stale lookups: a network filesystem's client that looked up
 * `waiting/<uriKey>/` before another machine's claim renamed it goes on resolving the name to the
 * claimed folder (a lease under running/, or one retired to done/) while it trusts its cache. A
 * task linked or renamed in through that name sits among claimed tasks, which may be pushed
 * already or swept from done/, and EEXIST there says nothing about what waits. Such a task goes
 * to the top of waiting/, where every node's listing sorts it into its folder.
 *
 * A local filesystem never shows that view, so the tests build what the client sees at the path:
 * `waiting/<uriKey>/` holding the lease's owner record (and a claimed task), with the lease folder
 * itself standing where the lock component keeps it.
 */
const URI = 'ssh://replica.example.com/p.git';
const KEY = uriKey(URI);
const LEASE = 'node-b.k3x9';
const T1 = Date.UTC(2024, 5, 1);

const live = (ref: string): Task => ({ project: 'p', refs: [ref], uri: URI, remote: 'mirror' });
const flatRel = (task: Task): string => `${WAITING}/${fileOf(task)}`;

/** `waiting/<uriKey>/` as the stale client sees it: the claimed folder, its owner record and `claimed` tasks. */
function staleView(env: StoreEnv, where: 'held' | 'retired' | 'nowhere', claimed: readonly Task[] = []): void {
  env.mkdir(`${WAITING}/${KEY}`);
  env.write(`${WAITING}/${KEY}/owner.json`, `${JSON.stringify({ version: 1, nodeId: 'node-b', leaseId: LEASE, counter: 3, uri: URI })}\n`);
  for (const task of claimed) env.write(waitingRel(task), encodeTask(task));
  if (where === 'held') env.mkdir(`ref-updates/running/${KEY}/${LEASE}`);
  if (where === 'retired') env.mkdir(`ref-updates/done/${KEY}.${LEASE}`);
}

describe.each(storeEnvs())('task store contract, a waiting folder seen as the folder a claim took (%s)', (_, makeEnv) => {
  it('queues at the top of waiting/ a task whose name is taken by a claimed task, which may have been pushed before this update', async () => {
    const env = makeEnv();
    const events: StoreEvent[] = [];
    const store = env.store('node-a', { onEvent: (event) => events.push(event) });
    await store.open();
    events.length = 0;
    const task = live('refs/heads/main');
    staleView(env, 'held', [task]);

    expect(await store.createMany([task])).toEqual([{ key: fileOf(task).replace('.json', ''), created: true }]);

    expect(env.read(flatRel(task))).toBe(encodeTask(task));
    expect(waitingFiles(env)).toEqual([fileOf(task), `${KEY}/${fileOf(task)}`, `${KEY}/owner.json`].sort());
    expect(events).toEqual([{ type: 'stale-waiting-folder', path: `${env.root}/${WAITING}/${KEY}`, movedTo: `${env.root}/${flatRel(task)}` }]);
    expect(env.list('ref-updates/building')).toEqual([]);
  });

  it('queues at the top of waiting/ a task that landed in a folder already retired to done/, where a sweep would delete it unpushed', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    staleView(env, 'retired', [live('refs/heads/main')]);
    const task = live('refs/heads/dev');

    expect((await store.createMany([task]))[0]?.created).toBe(true);

    expect(env.read(flatRel(task))).toBe(encodeTask(task));
    // Queued twice is harmless: the copy among the claimed tasks goes with them.
    expect(env.exists(waitingRel(task))).toBe(true);
  });

  it('a second publish of the same task finds the flat copy and reports it queued', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const task = live('refs/heads/main');
    staleView(env, 'held', [task]);
    await store.createMany([task]);

    expect((await store.createMany([task]))[0]?.created).toBe(false);
    expect(env.list(WAITING).filter((name) => name.endsWith('.json'))).toEqual([fileOf(task)]);
  });

  it('takes an owner record whose lease is neither held nor retired (a file left there by hand) for nothing: the task is queued in its folder', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const task = live('refs/heads/main');
    staleView(env, 'nowhere', [task]);
    const dev = live('refs/heads/dev');

    expect((await store.createMany([task, dev])).map((result) => result.created)).toEqual([false, true]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(dev)}`, `${KEY}/${fileOf(task)}`, `${KEY}/owner.json`].sort());
  });

  it('puts a task reset into a folder seen as claimed at the top of waiting/, with its mtime', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const task = live('refs/heads/main');
    env.mkdir('ref-updates/running/lock-1');
    env.write(`ref-updates/running/lock-1/${fileOf(task)}`, encodeTask(task));
    env.setMtime(`ref-updates/running/lock-1/${fileOf(task)}`, T1);
    staleView(env, 'retired');

    expect(await store.reset('lock-1', [{ name: fileOf(task), key: fileOf(task).replace('.json', ''), task, mtimeMs: T1 }])).toEqual([fileOf(task)]);

    expect(env.read(flatRel(task))).toBe(encodeTask(task));
    expect(env.mtime(flatRel(task))).toBe(T1);
    expect(env.exists(waitingRel(task))).toBe(false);
    expect(env.list('ref-updates/running/lock-1')).toEqual([]);
  });

  it('leaves a flat task unsorted while its folder is seen as claimed, says why, and sorts it once the view is fresh', async () => {
    const env = makeEnv();
    const events: StoreEvent[] = [];
    const store = env.store('node-a', { onEvent: (event) => events.push(event) });
    await store.open();
    events.length = 0;
    const claimed = live('refs/heads/main');
    staleView(env, 'held', [claimed]);
    env.write(flatRel(claimed), encodeTask(claimed));

    const first = await store.listWaiting();

    expect(first.loose).toEqual([fileOf(claimed)]);
    expect(env.read(flatRel(claimed))).toBe(encodeTask(claimed));
    expect(events).toEqual([
      {
        type: 'waiting-task-left',
        path: `${env.root}/${flatRel(claimed)}`,
        reason: `waiting/${KEY} is seen here as a folder a claim took (a stale lookup on a network filesystem); tried again later`,
      },
    ]);

    // The claim's push ended and its folder was swept: the name resolves afresh, to no folder.
    for (const name of env.list(`${WAITING}/${KEY}`)) await env.fs.unlink(`${env.root}/${WAITING}/${KEY}/${name}`);
    await env.fs.rmdir(`${env.root}/${WAITING}/${KEY}`);
    const second = await store.listWaiting();

    expect(second.loose).toEqual([]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(claimed)}`]);
  });
});
