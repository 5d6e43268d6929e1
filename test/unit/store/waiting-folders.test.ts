import { describe, expect, it } from 'vitest';
import type { StoreFs } from '../../../src/store/store-fs.js';
import type { StoreEvent } from '../../../src/store/store-types.js';
import { TaskStore, type TaskStoreOptions } from '../../../src/store/task-store.js';
import { encodeTask, uriKey, type Task } from '../../../src/task/task.js';
import { faultyFs, fsError } from '../../contract/support/faulty-fs.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';
import { countingFs, fileOf, folderOf } from '../../contract/support/waiting-layout.js';

/**
 * WaitingFolders (store/waiting-folders.ts) behind `TaskStore.listWaiting`: what a node learns of
 * waiting/ and what each pass costs. The in-memory fs stamps every change with a time of its own
 * that moves on by 1 ms per change; the node's clock is an hour ahead of it, so every change is
 * "old" for the node unless a test says otherwise.
 */
const ROOT = '/s';
const WAITING = `${ROOT}/ref-updates/waiting`;
const T0 = Date.UTC(2025, 0, 1);
const HOUR = 3_600_000;

const task = (repo: string, ref = 'refs/heads/main'): Task => ({ project: repo, refs: [ref], uri: `ssh://h/${repo}.git`, remote: 'm' });

/** A node (`node`, its calls counted, through `wrap` when given) and a peer on one in-memory store. */
function world(options: Partial<TaskStoreOptions> & { wrap?: (fs: StoreFs) => StoreFs } = {}) {
  let fsNow = T0;
  const memory = new MemoryStoreFs(() => (fsNow += 1));
  const counting = countingFs(memory);
  const clock = { now: () => T0 + HOUR, monotonic: () => 0 };
  const events: StoreEvent[] = [];
  const { wrap = (fs) => fs, ...rest } = options;
  const node = new TaskStore({ root: ROOT, nodeId: 'n', fs: wrap(counting.fs), clock, onEvent: (event) => events.push(event), ...rest });
  const peer = new TaskStore({ root: ROOT, nodeId: 'peer', fs: memory, clock });
  return { memory, counting, node, peer, events };
}

describe('waiting folders', () => {
  it('learns a folder once: its count, oldest time and sample; a later pass over an unchanged waiting/ reads nothing', async () => {
    const { memory, counting, node, peer } = world();
    await peer.createMany([task('a', 'refs/heads/1'), task('a', 'refs/heads/2'), task('b')]);
    memory.setMtime(`${WAITING}/${folderOf(task('a'))}/${fileOf(task('a', 'refs/heads/2'))}`, T0 - HOUR);

    const first = await node.listWaiting();

    expect(first.folders.map((f) => [f.folder, f.taskCount, f.oldestMtimeMs, f.sample.task.refs[0]]).sort()).toEqual(
      [
        [folderOf(task('a')), 2, T0 - HOUR, 'refs/heads/2'],
        [folderOf(task('b')), 1, expect.any(Number), 'refs/heads/main'],
      ].sort(),
    );
    expect(first).toMatchObject({ unlearned: 0, loose: [] });
    expect(counting.calls.readBounded).toBe(2); // one task per folder
    counting.reset();

    const second = await node.listWaiting();

    expect(counting.calls).toMatchObject({ readdir: 0, readBounded: 0, open: 0, lstat: 1 }); // the stamp of waiting/
    expect(second.folders).toEqual(first.folders);
    expect(second.folders[0]).toBe(first.folders[0]);
  });

  it('gives a cached listing without any I/O, and one without the folders this node claimed from', async () => {
    const { memory, counting, node, peer } = world();
    await peer.createMany([task('a'), task('b')]);
    await node.listWaiting();
    memory.mkdirSync(`${ROOT}/ref-updates/running/l`);
    await node.claim('l', uriKey(task('a').uri));
    await peer.create(task('c'));
    counting.reset();

    const cached = await node.listWaiting({ cached: true });

    expect(counting.total()).toBe(0);
    expect(cached.folders.map((f) => f.folder)).toEqual([folderOf(task('b'))]);
    expect((await node.listWaiting()).folders.map((f) => f.folder).sort()).toEqual([folderOf(task('b')), folderOf(task('c'))].sort());
  });

  it('reads a folder again after this node claimed from it, and only that folder', async () => {
    let racing = false;
    const { memory, counting, node, peer } = world({
      // An update arrives between the claim's readdir and its rmdir: the folder stays.
      wrap: (fs) =>
        faultyFs(fs, {
          rmdir: async (path) => {
            if (racing && path.endsWith(folderOf(task('a')))) await peer.create(task('a', 'refs/heads/late'));
            return fs.rmdir(path);
          },
        }),
    });
    await peer.createMany([task('a'), task('b')]);
    await node.listWaiting();
    memory.mkdirSync(`${ROOT}/ref-updates/running/l`);
    racing = true;
    expect((await node.claim('l', uriKey(task('a').uri))).map((t) => t.name)).toEqual([fileOf(task('a'))]);
    racing = false;
    counting.reset();

    const { folders } = await node.listWaiting();

    expect(folders.map((f) => [f.folder, f.sample.task.refs[0]]).sort()).toEqual(
      [
        [folderOf(task('a')), 'refs/heads/late'],
        [folderOf(task('b')), 'refs/heads/main'],
      ].sort(),
    );
    expect(counting.calls.readBounded).toBe(1);
  });

  it('lists waiting/ again after a readdir of it failed, even though its stamp is old', async () => {
    let failing = false;
    const { node, peer } = world({
      wrap: (fs) =>
        faultyFs(fs, {
          readdir: async (path) => {
            if (failing && path === WAITING) throw fsError('EIO', 'scandir', path);
            return fs.readdir(path);
          },
        }),
    });
    await peer.create(task('a'));
    await node.listWaiting();
    await peer.create(task('b'));
    failing = true;

    await expect(node.listWaiting()).rejects.toThrow('list waiting tasks failed (EIO)');
    failing = false;

    expect((await node.listWaiting()).folders.map((f) => f.folder).sort()).toEqual([folderOf(task('a')), folderOf(task('b'))].sort());
  });

  it('sorts flat task files into their folders, at most learnPerPass a pass, and learns the folders they went into', async () => {
    const { memory, node, peer, events } = world({ learnPerPass: 2 });
    await peer.create(task('a', 'refs/heads/queued'));
    await node.listWaiting();
    const flat = [task('a', 'refs/heads/flat'), task('b'), task('c')];
    for (const t of flat) memory.writeRaw(`${WAITING}/${fileOf(t)}`, encodeTask(t));
    memory.setMtime(`${WAITING}/${fileOf(flat[0]!)}`, T0 - HOUR);

    const first = await node.listWaiting();

    expect(first.loose).toHaveLength(1);
    expect(memory.readdirSync(WAITING).filter((name) => name.endsWith('.json'))).toEqual(first.loose);
    const second = await node.listWaiting();
    expect(second.loose).toEqual([]);
    expect(memory.readdirSync(WAITING).sort()).toEqual([folderOf(task('a')), folderOf(task('b')), folderOf(task('c'))].sort());
    // The folder a flat task joined is learned again: its oldest task is the one sorted in, mtime kept.
    const a = second.folders.find((f) => f.folder === folderOf(task('a')));
    expect([a?.sample.task.refs[0], a?.oldestMtimeMs, a?.taskCount]).toEqual(['refs/heads/flat', T0 - HOUR, 2]);
    expect(second.folders).toHaveLength(3);
    expect(events.filter((e) => e.type === 'waiting-task-left')).toEqual([]);
  });

  it('reports a flat task it cannot sort once and keeps counting it; a FIFO under a task name goes to corrupt/', async () => {
    const { memory, node, peer, events } = world();
    await node.listWaiting();
    const stuck = task('a');
    memory.writeRaw(`${WAITING}/${fileOf(stuck)}`, encodeTask(stuck));
    // Another task stands under that name in its folder: a person has to look.
    memory.mkdirSync(`${WAITING}/${folderOf(stuck)}`);
    memory.writeRaw(`${WAITING}/${folderOf(stuck)}/${fileOf(stuck)}`, encodeTask(task('a', 'refs/heads/other')));
    const fifo = `${'f'.repeat(40)}.json`;
    memory.makeSpecial(`${WAITING}/${fifo}`, 'fifo');

    expect((await node.listWaiting()).loose).toEqual([fileOf(stuck)]);
    await peer.create(task('b')); // waiting/ changes: the flat files are looked at again
    expect((await node.listWaiting()).loose).toEqual([fileOf(stuck)]);

    const left = events.filter((e) => e.type === 'waiting-task-left');
    expect(left).toEqual([
      {
        type: 'waiting-task-left',
        path: `${WAITING}/${fileOf(stuck)}`,
        reason: `waiting/${folderOf(stuck)}/${fileOf(stuck)} holds another task under the same name`,
      },
    ]);
    expect(memory.readdirSync(WAITING)).not.toContain(fifo);
    expect(events.flatMap((e) => (e.type === 'quarantined' ? [[e.path, e.reason]] : []))).toEqual([[`${WAITING}/${fifo}`, 'a FIFO where a file is expected']]);
  });

  it('goes on with the pass when sorting a flat file fails for real, and tries it again after waiting/ changed', async () => {
    let failing = true;
    const isFlat = (path: string): boolean => path.startsWith(`${WAITING}/`) && path.split('/').length === WAITING.split('/').length + 1;
    const { memory, node, peer, events } = world({
      wrap: (fs) =>
        faultyFs(fs, {
          rename: async (from, to) => {
            if (failing && isFlat(from)) throw fsError('EIO', 'rename', from);
            return fs.rename(from, to);
          },
        }),
    });
    await peer.create(task('b'));
    await node.listWaiting();
    memory.writeRaw(`${WAITING}/${fileOf(task('a'))}`, encodeTask(task('a')));

    const listed = await node.listWaiting();

    expect(listed.folders.map((f) => f.folder)).toEqual([folderOf(task('b'))]);
    expect(listed.loose).toEqual([fileOf(task('a'))]);
    expect(events.map((e) => e.type)).toEqual(['waiting-task-left']);
    failing = false;
    await peer.create(task('c'));
    expect((await node.listWaiting()).loose).toEqual([]);
    expect(memory.readdirSync(`${WAITING}/${folderOf(task('a'))}`)).toEqual([fileOf(task('a'))]);
  });

  it('counts the folders it has not learned yet; a cached listing does not look for new ones', async () => {
    const { node, peer } = world({ learnPerPass: 1 });
    await peer.createMany([task('a'), task('b'), task('c')]);
    const first = await node.listWaiting();
    expect([first.folders.length, first.unlearned]).toEqual([1, 2]);
    const second = await node.listWaiting();
    expect([second.folders.length, second.unlearned]).toEqual([2, 1]);
    await peer.create(task('d'));
    expect(await node.listWaiting({ cached: true })).toMatchObject({ unlearned: 1, loose: [] });
    const third = await node.listWaiting();
    expect([third.folders.length, third.unlearned]).toEqual([3, 1]);
  });

  it('learns a folder that appeared after its start before the rest of the backlog it started on', async () => {
    const { node, peer } = world({ learnPerPass: 1 });
    await peer.createMany([task('a'), task('b'), task('c')]);
    expect((await node.listWaiting()).unlearned).toBe(2);
    await peer.create(task('live'));

    const next = await node.listWaiting();

    expect(next.folders.map((f) => f.folder)).toContain(folderOf(task('live')));
    expect(next.unlearned).toBe(2);
  });

  it('puts a task back into a folder a peer removed while a stale attribute cache still shows it', async () => {
    // An sshfs or NFS client caches attributes: lstat says the folder is there after the peer's rmdir.
    const staleFolder = `${WAITING}/${folderOf(task('a'))}`;
    let stale = false;
    const { memory, node, peer } = world({
      wrap: (fs) => faultyFs(fs, { lstat: async (path) => (stale && path === staleFolder ? memory.statSync(`${ROOT}/ref-updates`) : fs.lstat(path)) }),
    });
    await peer.create(task('a'));
    memory.mkdirSync(`${ROOT}/ref-updates/running/l`);
    const claimed = await node.claim('l', uriKey(task('a').uri));
    stale = true;
    expect(memory.readdirSync(WAITING)).toEqual([]);

    expect(await node.reset('l', claimed)).toEqual([fileOf(task('a'))]);

    expect(memory.readdirSync(staleFolder)).toEqual([fileOf(task('a'))]);
  });
});
