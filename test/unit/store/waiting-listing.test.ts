import { describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import type { StoreFs } from '../../../src/store/store-fs.js';
import type { Task } from '../../../src/task/task.js';
import { faultyFs } from '../../contract/support/faulty-fs.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';

const task = (i: number): Task => ({ project: 'p', refs: [`refs/heads/b${i}`], uri: 'ssh://h/p.git', remote: 'm' });

/** Counts the task files opened for reading: the work a listing pass costs beyond its readdir. */
function countingFs(base: StoreFs): { fs: StoreFs; reads: () => number } {
  let reads = 0;
  const fs = faultyFs(base, {
    readBounded: (path, maxBytes) => {
      if (path.includes('/waiting/')) reads++;
      return base.readBounded(path, maxBytes);
    },
  });
  return { fs, reads: () => reads };
}

describe('waiting listing cache', () => {
  it('reads each task file once; a warm pass returns the very same objects', async () => {
    const memory = new MemoryStoreFs();
    const { fs, reads } = countingFs(memory);
    const store = new TaskStore({ root: '/s', nodeId: 'n', fs });
    await store.createMany([task(1), task(2), task(3)]);

    const cold = await store.listWaiting();
    const warm = await store.listWaiting();

    expect(reads()).toBe(3);
    expect(warm).toHaveLength(3);
    for (const entry of warm) expect(cold).toContain(entry);
    expect(Object.isFrozen(warm[0])).toBe(true);
  });

  it('reads only the new names and forgets removed ones', async () => {
    const memory = new MemoryStoreFs();
    const { fs, reads } = countingFs(memory);
    const store = new TaskStore({ root: '/s', nodeId: 'n', fs });
    const [first] = await store.createMany([task(1), task(2)]);
    await store.listWaiting();
    const peer = new TaskStore({ root: '/s', nodeId: 'peer', fs: memory });
    await peer.create(task(3));
    memory.mkdirSync('/s/ref-updates/running/l');
    await peer.claim('l', [`${first?.key}.json`]);

    const listed = await store.listWaiting();

    expect(reads()).toBe(3);
    expect(listed.map((t) => t.task.refs[0]).sort()).toEqual(['refs/heads/b2', 'refs/heads/b3']);
  });

  it('re-reads a task this node claimed when it shows up again, since it may be a new file', async () => {
    const memory = new MemoryStoreFs();
    const { fs, reads } = countingFs(memory);
    const store = new TaskStore({ root: '/s', nodeId: 'n', fs });
    const { key } = await store.create(task(1));
    await store.listWaiting();
    memory.mkdirSync('/s/ref-updates/running/l');
    await store.claim('l', [`${key}.json`]);
    await store.finish('l', [`${key}.json`]);
    await store.create(task(1));
    await store.listWaiting();
    expect(reads()).toBe(2);
  });

  it('a cached listing is the last one minus what this node claimed since, with no reads at all', async () => {
    const memory = new MemoryStoreFs();
    let readdirs = 0;
    const fs = faultyFs(memory, {
      readdir: (path) => {
        readdirs++;
        return memory.readdir(path);
      },
    });
    const store = new TaskStore({ root: '/s', nodeId: 'n', fs });
    await store.createMany([task(1), task(2), task(3)]);
    const listed = await store.listWaiting();
    const claimedName = listed[0]!.name;
    memory.mkdirSync('/s/ref-updates/running/lock');
    memory.mkdirSync('/s/ref-updates/running/lock/lease');
    expect(await store.claim('lock/lease', [claimedName])).toEqual([claimedName]);
    // Queued by someone else after the listing: not seen until the next fresh listing.
    await store.create(task(4));
    const before = readdirs;

    const cached = await store.listWaiting({ cached: true });

    expect(readdirs).toBe(before);
    expect(cached.map((entry) => entry.name).sort()).toEqual(
      listed
        .slice(1)
        .map((entry) => entry.name)
        .sort(),
    );
    expect(await store.listWaiting()).toHaveLength(3);
  });
});
