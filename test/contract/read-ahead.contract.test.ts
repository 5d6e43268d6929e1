import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoreFs } from '../../src/store/store-fs.js';
import type { ClaimedTask, TaskStore } from '../../src/store/task-store.js';
import { encodeTask, uriKey, type Task } from '../../src/task/task.js';
import { faultyFs } from './support/faulty-fs.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { WAITING, fileOf, waitingRel } from './support/waiting-layout.js';

/**
 * DESIGN.md "Read-ahead": a node reads the tasks of a URI due soon before it claims it; the claim
 * then renames and `lstat`s each task it read ahead instead of reading it, and reads everything
 * else — a task that came later, a file changed or published again since, one not named by its
 * content — as a claim always does.
 */
const RUNNING = 'ref-updates/running';
const CORRUPT = 'ref-updates/corrupt';
const LOCK = 'lock-1';
const URI = 'ssh://replica.example.com/p.git';
const KEY = uriKey(URI);
const T1 = Date.UTC(2024, 5, 1);
const T2 = Date.UTC(2024, 5, 2);

const live = (ref: string): Task => ({ project: 'p', refs: [ref], uri: URI, remote: 'mirror' });

/** `base`, counting reads and lstats of files under running/ (where a claim reads its tasks). */
function countingClaimReads(base: StoreFs): { fs: StoreFs; reads: () => number; lstats: () => number; reset: () => void } {
  let reads = 0;
  let lstats = 0;
  const fs = faultyFs(base, {
    readBounded: (path, maxBytes) => {
      if (path.includes(`/${RUNNING}/`)) reads++;
      return base.readBounded(path, maxBytes);
    },
    lstat: (path) => {
      if (path.includes(`/${RUNNING}/`) && path.endsWith('.json')) lstats++;
      return base.lstat(path);
    },
  });
  return {
    fs,
    reads: () => reads,
    lstats: () => lstats,
    reset: () => {
      reads = 0;
      lstats = 0;
    },
  };
}

/** Node A, counting its claim's reads, once it has learned waiting/ and read the URI's tasks ahead. */
async function readAheadByNodeA(env: StoreEnv): Promise<{ node: TaskStore; counting: ReturnType<typeof countingClaimReads> }> {
  const counting = countingClaimReads(env.fs);
  const node = env.store('node-a', { fs: counting.fs });
  await node.listWaiting();
  await node.readAhead([KEY]);
  return { node, counting };
}

const byRef = (tasks: readonly ClaimedTask[]): Array<[string | undefined, string, number]> =>
  tasks.map((t): [string | undefined, string, number] => [t.task.refs[0], t.name, t.mtimeMs]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));

describe.each(storeEnvs())('task store contract, read-ahead (%s)', (_, makeEnv) => {
  it('claims the tasks it read ahead without reading them again: each is renamed and lstat-ed, and the claim returns what a read would', async () => {
    const env = makeEnv();
    const tasks = [live('refs/heads/a'), live('refs/heads/b'), live('refs/heads/c')];
    await env.store('node-b').createMany(tasks);
    for (const task of tasks) env.setMtime(waitingRel(task), T1);
    const { node, counting } = await readAheadByNodeA(env);
    env.mkdir(`${RUNNING}/${LOCK}`);
    counting.reset();

    const claimed = await node.claim(LOCK, KEY);

    expect([counting.reads(), counting.lstats()]).toEqual([0, 3]);
    expect(byRef(claimed)).toEqual(tasks.map((task) => [task.refs[0], fileOf(task), T1]));
    expect(claimed.map((t) => t.task)).toEqual(expect.arrayContaining(tasks));
    expect(env.list(`${RUNNING}/${LOCK}`).sort()).toEqual(tasks.map(fileOf).sort());
  });

  it('claims a task a peer pushed and that was published again under its name since as the new file, with its mtime', async () => {
    const env = makeEnv();
    const task = live('refs/heads/main');
    const peer = env.store('node-b');
    await peer.create(task);
    env.setMtime(waitingRel(task), T1);
    const { node, counting } = await readAheadByNodeA(env);
    env.mkdir(`${RUNNING}/lock-peer`);
    expect((await peer.claim('lock-peer', KEY)).map((t) => t.name)).toEqual([fileOf(task)]);
    expect(await peer.finish('lock-peer', [fileOf(task)])).toEqual([fileOf(task)]);
    await peer.create(task);
    env.setMtime(waitingRel(task), T2);
    env.mkdir(`${RUNNING}/${LOCK}`);
    counting.reset();

    const claimed = await node.claim(LOCK, KEY);

    expect(byRef(claimed)).toEqual([[task.refs[0], fileOf(task), T2]]);
    expect(counting.reads()).toBe(1);
  });

  it('quarantines a directory put under the name of a task it read ahead, and claims the rest', async () => {
    const env = makeEnv();
    const kept = live('refs/heads/kept');
    const swapped = live('refs/heads/swapped');
    await env.store('node-b').createMany([kept, swapped]);
    const node = env.store('node-a');
    await node.listWaiting();
    await node.readAhead([KEY]);
    await env.fs.unlink(join(env.root, waitingRel(swapped)));
    env.mkdir(waitingRel(swapped));
    env.mkdir(`${RUNNING}/${LOCK}`);

    const claimed = await node.claim(LOCK, KEY);

    expect(claimed.map((t) => t.task)).toEqual([kept]);
    expect(env.list(CORRUPT).filter((name) => name.startsWith(fileOf(swapped)) && !name.endsWith('.reason'))).toHaveLength(1);
    expect(env.list(`${RUNNING}/${LOCK}`)).toEqual([fileOf(kept)]);
  });

  it('reads at the claim the task files not named by their content, even when unchanged', async () => {
    const env = makeEnv();
    const handMade = `${'a'.repeat(40)}.json`;
    env.mkdir(`${WAITING}/${KEY}`);
    env.write(`${WAITING}/${KEY}/${handMade}`, encodeTask(live('refs/heads/main')));
    const { node, counting } = await readAheadByNodeA(env);
    env.mkdir(`${RUNNING}/${LOCK}`);
    counting.reset();

    const claimed = await node.claim(LOCK, KEY);

    expect(claimed.map((t) => [t.name, t.task.refs])).toEqual([[handMade, ['refs/heads/main']]]);
    expect([counting.lstats(), counting.reads()]).toEqual([0, 1]);
  });

  it('reads at the claim a task that arrived after the read-ahead, and everything after a claim dropped what was read', async () => {
    const env = makeEnv();
    const first = live('refs/heads/first');
    const second = live('refs/heads/second');
    const late = live('refs/heads/late');
    await env.store('node-b').createMany([first, second]);
    const { node, counting } = await readAheadByNodeA(env);
    await env.store('node-b').create(late);
    env.mkdir(`${RUNNING}/${LOCK}`);
    counting.reset();

    const claimed = await node.claim(LOCK, KEY);

    expect(counting.reads()).toBe(1);
    expect(claimed.map((t) => [t.name, t.task]).sort()).toEqual(
      [
        [fileOf(first), first],
        [fileOf(second), second],
        [fileOf(late), late],
      ].sort(),
    );

    // Claimed from: nothing of that folder is held any more, so once it is learned again it is
    // read ahead again (a folder still marked as read would be skipped) and claimed without a read.
    const again = live('refs/heads/again');
    await env.store('node-b').create(again);
    await node.listWaiting();
    await node.readAhead([KEY]);
    env.mkdir(`${RUNNING}/lock-2`);
    counting.reset();
    expect((await node.claim('lock-2', KEY)).map((t) => t.task)).toEqual([again]);
    expect([counting.reads(), counting.lstats()]).toEqual([0, 1]);
  });

  it('drops reads older than a minute at the next listing, and leaves a task file over 64 KiB to the claim', async () => {
    const env = makeEnv();
    let monotonic = 0;
    const clock = { now: () => Date.now() + 60_000, monotonic: () => monotonic };
    const small = live('refs/heads/small');
    const big: Task = { ...live('refs/heads/big'), refs: Array.from({ length: 800 }, (_, i) => `refs/heads/${'b'.repeat(80)}${String(i).padStart(4, '0')}`) };
    expect(encodeTask(big).length).toBeGreaterThan(64 * 1024);
    await env.store('node-b').createMany([small, big]);
    const counting = countingClaimReads(env.fs);
    const node = env.store('node-a', { fs: counting.fs, clock });
    await node.listWaiting();
    await node.readAhead([KEY]);
    env.mkdir(`${RUNNING}/${LOCK}`);
    counting.reset();
    expect((await node.claim(LOCK, KEY)).map((t) => t.task.refs[0]).sort()).toEqual([big.refs[0], 'refs/heads/small']);
    // The small one was read ahead; the big one is read at the claim.
    expect([counting.reads(), counting.lstats()]).toEqual([1, 1]);

    const late = live('refs/heads/late');
    await env.store('node-b').create(late);
    await node.listWaiting();
    await node.readAhead([KEY]);
    monotonic += 60_001;
    await node.listWaiting();
    env.mkdir(`${RUNNING}/lock-2`);
    counting.reset();
    expect((await node.claim('lock-2', KEY)).map((t) => t.task)).toEqual([late]);
    expect([counting.reads(), counting.lstats()]).toEqual([1, 0]);
  });

  it('leaves a file it cannot read to the claim, which quarantines it and claims the rest', async () => {
    const env = makeEnv();
    const good = live('refs/heads/good');
    await env.store('node-b').create(good);
    const garbage = `${'0'.repeat(40)}.json`;
    env.write(`${WAITING}/${KEY}/${garbage}`, '{"not": "a task"');
    const node = env.store('node-a');
    await node.listWaiting();
    await node.readAhead([KEY]);
    env.mkdir(`${RUNNING}/${LOCK}`);

    const claimed = await node.claim(LOCK, KEY);

    expect(claimed.map((t) => t.task)).toEqual([good]);
    expect(env.list(CORRUPT).filter((name) => name.startsWith(garbage) && !name.endsWith('.reason'))).toHaveLength(1);
    expect(env.list(`${RUNNING}/${LOCK}`)).toEqual([fileOf(good)]);
  });

  it('reads ahead only folders it has learned, and not at all before the store is opened', async () => {
    const env = makeEnv();
    await env.store('node-b').create(live('refs/heads/main'));
    const counting = countingClaimReads(env.fs);
    let waitingReads = 0;
    const node = env.store('node-a', {
      fs: faultyFs(counting.fs, {
        readBounded: (path, maxBytes) => {
          if (path.includes(`/${WAITING}/`)) waitingReads++;
          return counting.fs.readBounded(path, maxBytes);
        },
      }),
    });

    await node.readAhead([KEY]);
    expect(waitingReads).toBe(0);
    await node.listWaiting();
    const learnReads = waitingReads;
    await node.readAhead([uriKey('ssh://replica.example.com/unknown.git')]);
    expect(waitingReads).toBe(learnReads);
    await node.readAhead([KEY]);
    await node.readAhead([KEY]);
    expect(waitingReads).toBe(learnReads + 1);
  });
});
