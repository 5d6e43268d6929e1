import { describe, expect, it } from 'vitest';
import { CLAIMED_VIEW_MAX_AGE_MS } from '../../src/store/claimed-view.js';
import type { StoreEvent, TaskStore } from '../../src/store/task-store.js';
import { encodeTask, uriKey, type Task } from '../../src/task/task.js';
import { faultyFs } from './support/faulty-fs.js';
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
 * `waiting/<uriKey>/` holding the lease's owner record, fresh, and a claimed task.
 */
const URI = 'ssh://replica.example.com/p.git';
const KEY = uriKey(URI);
const OWNER = `${WAITING}/${KEY}/owner.json`;
const T1 = Date.UTC(2024, 5, 1);

const live = (ref: string): Task => ({ project: 'p', refs: [ref], uri: URI, remote: 'mirror' });
const flatRel = (task: Task): string => `${WAITING}/${fileOf(task)}`;

/** `waiting/<uriKey>/` as the stale client sees it: the claimed folder, its owner record and `claimed` tasks. */
function staleView(env: StoreEnv, claimed: readonly Task[] = []): void {
  env.mkdir(`${WAITING}/${KEY}`);
  env.write(OWNER, `${JSON.stringify({ version: 1, nodeId: 'node-b', leaseId: 'node-b.k3x9', counter: 3, uri: URI })}\n`);
  for (const task of claimed) env.write(waitingRel(task), encodeTask(task));
}

/** A node's store, opened, with the events it sends from then on. */
async function openWithEvents(env: StoreEnv): Promise<{ store: TaskStore; events: StoreEvent[] }> {
  const events: StoreEvent[] = [];
  const store = env.store('node-a', { onEvent: (event) => events.push(event) });
  await store.open();
  events.length = 0; // the store's marker, made by the open
  return { store, events };
}

describe.each(storeEnvs())('task store contract, a waiting folder seen as the folder a claim took (%s)', (_, makeEnv) => {
  it('queues at the top of waiting/ a task whose name is taken by a claimed task, which may have been pushed before this update', async () => {
    const env = makeEnv();
    const { store, events } = await openWithEvents(env);
    const task = live('refs/heads/main');
    staleView(env, [task]);

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
    staleView(env, [live('refs/heads/main')]);
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
    staleView(env, [task]);
    await store.createMany([task]);

    expect((await store.createMany([task]))[0]?.created).toBe(false);
    expect(env.list(WAITING).filter((name) => name.endsWith('.json'))).toEqual([fileOf(task)]);
  });

  it('queues at the top of waiting/ a task whose flat name holds garbage: the garbage goes to corrupt/', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const task = live('refs/heads/main');
    staleView(env, [task]);
    env.write(flatRel(task), 'garbage');

    expect((await store.createMany([task]))[0]?.created).toBe(true);
    expect(env.read(flatRel(task))).toBe(encodeTask(task));
    expect(env.list('ref-updates/corrupt').filter((name) => name.endsWith('.reason'))).toHaveLength(1);
  });

  it('takes an owner record last written over five minutes ago (a file left there by hand) for nothing: the task is queued in its folder', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const task = live('refs/heads/main');
    staleView(env, [task]);
    env.setMtime(OWNER, env.mtime(OWNER) - CLAIMED_VIEW_MAX_AGE_MS - 60_000);
    const dev = live('refs/heads/dev');

    expect((await store.createMany([task, dev])).map((result) => result.created)).toEqual([false, true]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(dev)}`, `${KEY}/${fileOf(task)}`, `${KEY}/owner.json`].sort());
  });

  it('puts a task reset toward a folder seen as claimed at the top of waiting/ before it could land there, with its mtime', async () => {
    const env = makeEnv();
    // Whatever lands in the claimed folder is swept at once, as done/'s sweep may: the only copy of a reset task must never go there.
    const sweeping = faultyFs(env.fs, {
      rename: async (from, to) => {
        await env.fs.rename(from, to);
        if (to.startsWith(`${env.root}/${WAITING}/${KEY}/`)) await env.fs.unlink(to);
      },
    });
    const store = env.store('node-a', { fs: sweeping });
    await store.open();
    const task = live('refs/heads/main');
    env.mkdir('ref-updates/running/lock-1');
    env.write(`ref-updates/running/lock-1/${fileOf(task)}`, encodeTask(task));
    env.setMtime(`ref-updates/running/lock-1/${fileOf(task)}`, T1);
    staleView(env);

    expect(await store.reset('lock-1', [{ name: fileOf(task), key: fileOf(task).replace('.json', ''), task, mtimeMs: T1 }])).toEqual([fileOf(task)]);

    expect(env.read(flatRel(task))).toBe(encodeTask(task));
    expect(env.mtime(flatRel(task))).toBe(T1);
    expect(env.exists(waitingRel(task))).toBe(false);
    expect(env.list('ref-updates/running/lock-1')).toEqual([]);
  });

  it('leaves a flat task unsorted while its folder is seen as claimed, says why, and sorts it once the view is fresh', async () => {
    const env = makeEnv();
    const { store, events } = await openWithEvents(env);
    const claimed = live('refs/heads/main');
    staleView(env, [claimed]);
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

  it('tells which tasks wait flat at the top of waiting/, for `replicate --wait`: not those in a folder, nor names that are no task files', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const [flat, foldered] = [live('refs/heads/flat'), live('refs/heads/main')];
    await store.createMany([foldered]);
    env.write(flatRel(flat), encodeTask(flat));

    const found = await store.flatWaitingNames([fileOf(flat), fileOf(foldered), fileOf(live('refs/heads/none')), '../refrelay-store.json']);

    expect([...found]).toEqual([fileOf(flat)]);
  });
});
