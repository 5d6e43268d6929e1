import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { taskKey, uriKey, type Task } from '../../src/task/task.js';
import { failingHandleFs, faultyFs, fsError } from './support/faulty-fs.js';
import { storeEnvs } from './support/store-envs.js';
import { WAITING, waitingFiles, waitingRel } from './support/waiting-layout.js';

const BUILDING = 'ref-updates/building';
const task: Task = { project: 'p', refs: ['refs/heads/main'], uri: 'ssh://h/p.git', remote: 'mirror' };
const KEY = uriKey(task.uri);

async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe.each(storeEnvs())('task store contract, faults (%s)', (_, makeEnv) => {
  it.each(['writeFile', 'sync', 'close'] as const)('fails create loudly on ENOSPC during %s and leaves no file behind', async (step) => {
    const env = makeEnv();
    await env.store('setup').open(); // the store exists; its disk fills up afterwards
    const store = env.store('node-a', { fs: failingHandleFs(env.fs, step, 'ENOSPC') });

    const error = await storeError(store.create(task));

    expect(error.code).toBe('STORE');
    expect(error.message).toContain('create task failed (ENOSPC)');
    expect(error.message).toContain(BUILDING);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(waitingFiles(env)).toEqual([]);
    expect(env.list(BUILDING)).toEqual([]);
  });

  it('treats EPERM from link with the target present as already queued (sshfs)', async () => {
    const env = makeEnv();
    const first = await env.store('node-a').create(task);
    const sshfs = faultyFs(env.fs, {
      link: async (_from, to) => {
        throw fsError('EPERM', 'link', to);
      },
    });

    expect(await env.store('node-b', { fs: sshfs }).create(task)).toEqual({ key: first.key, created: false });
    expect(waitingFiles(env)).toEqual([`${KEY}/${first.key}.json`]);
    expect(env.list(BUILDING)).toEqual([]);
  });

  it('creates a task that another node claims before the new file is fsynced, its folder emptied and removed', async () => {
    const env = makeEnv();
    const peer = env.store('node-b');
    await peer.open();
    env.mkdir('ref-updates/running/lock-1');
    const claimed: string[] = [];
    // fsyncDirectory opens the folder to sync the new entry; the claimer got there first.
    const racing = faultyFs(env.fs, {
      open: async (path, flags) => {
        if (flags === 'r' && path.endsWith(`/waiting/${KEY}`)) claimed.push(...(await peer.claim('lock-1', KEY)).map((t) => t.name));
        return env.fs.open(path, flags);
      },
    });

    expect(await env.store('node-a', { fs: racing }).create(task)).toEqual({ key: taskKey(task), created: true });

    expect(claimed).toEqual([`${taskKey(task)}.json`]);
    expect(env.list(WAITING)).toEqual([]);
    expect(env.list(BUILDING)).toEqual([]);
  });

  it('treats EPERM from link with no target as a real failure', async () => {
    const env = makeEnv();
    await env.store('setup').open();
    const denied = faultyFs(env.fs, {
      link: async (_from, to) => {
        throw fsError('EPERM', 'link', to);
      },
    });
    const error = await storeError(env.store('node-a', { fs: denied }).create(task));
    expect(error.message).toContain(`${WAITING}/${KEY}/${taskKey(task)}.json`);
    expect(env.list(BUILDING)).toEqual([]);
  });

  it('fails create loudly on a read-only store and removes its temp', async () => {
    const env = makeEnv();
    await env.store('setup').open();
    const readOnly = faultyFs(env.fs, {
      link: async (_from, to) => {
        throw fsError('EROFS', 'link', to);
      },
    });
    const error = await storeError(env.store('node-a', { fs: readOnly }).create(task));
    expect(error.message).toContain('(EROFS)');
    expect(waitingFiles(env)).toEqual([]);
    expect(env.list(BUILDING)).toEqual([]);
  });

  it('createEach reports each task of a store that fails every write (EIO) in its place, and publishes none', async () => {
    const env = makeEnv();
    await env.store('setup').open();
    const failing = faultyFs(env.fs, {
      link: async (_from, to) => {
        throw fsError('EIO', 'link', to);
      },
    });
    const other: Task = { ...task, uri: 'ssh://h/q.git' };

    const outcomes = await env.store('node-a', { fs: failing }).createEach([task, other]);

    expect(outcomes.map((outcome) => 'error' in outcome && outcome.error instanceof StoreError && outcome.error.message)).toEqual([
      expect.stringContaining(`create task failed (EIO) at ${env.root}/${WAITING}/${KEY}/${taskKey(task)}.json`),
      expect.stringContaining(`create task failed (EIO) at ${env.root}/${WAITING}/${uriKey(other.uri)}/${taskKey(other)}.json`),
    ]);
    expect(waitingFiles(env)).toEqual([]);
    expect(env.list(BUILDING)).toEqual([]);
  });

  it('reports a store whose folders cannot be created, and retries on the next call', async () => {
    const env = makeEnv();
    let broken = true;
    const fs = faultyFs(env.fs, {
      mkdir: async (path, options) => {
        if (broken) throw fsError('EROFS', 'mkdir', path);
        return env.fs.mkdir(path, options);
      },
    });
    const store = env.store('node-a', { fs });
    const error = await storeError(store.listWaiting());
    expect(error.message).toContain('create store folder failed (EROFS)');
    broken = false;
    expect((await store.create(task)).created).toBe(true);
  });

  it('raises a real read failure instead of quarantining the file', async () => {
    const env = makeEnv();
    await env.store('node-a').create(task);
    const failing = faultyFs(env.fs, {
      readBounded: async (path, maxBytes) => {
        if (path.includes('/waiting/')) throw fsError('EIO', 'open', path);
        return env.fs.readBounded(path, maxBytes);
      },
    });
    const error = await storeError(env.store('node-b', { fs: failing }).listWaiting());
    expect(error.message).toContain('read task file failed (EIO)');
    expect(waitingFiles(env)).toEqual([`${KEY}/${taskKey(task)}.json`]);
    expect(env.list('ref-updates/corrupt')).toEqual([]);
  });

  it('skips a file that vanishes between listing and reading (ENOENT, ESTALE)', async () => {
    const env = makeEnv();
    const other = { ...task, refs: ['refs/heads/other'] };
    await env.store('node-a').createMany([task, other]);
    env.setMtime(waitingRel(task), Date.UTC(2024, 0, 1)); // the oldest, so learning reads it first
    const vanishing = faultyFs(env.fs, {
      readBounded: async (path, maxBytes) => {
        if (path.endsWith(`${taskKey(task)}.json`)) throw fsError('ESTALE', 'open', path);
        return env.fs.readBounded(path, maxBytes);
      },
    });
    const b = env.store('node-b', { fs: vanishing });
    const listed = await b.listWaiting();
    expect(listed.folders.map((f) => [f.sample.task.refs[0], f.taskCount])).toEqual([['refs/heads/other', 1]]);
    env.mkdir('ref-updates/running/lock-1');
    expect((await b.claim('lock-1', KEY)).map((t) => t.task.refs[0])).toEqual(['refs/heads/other']);
    expect(env.list('ref-updates/corrupt')).toEqual([]);
  });

  it('does not let a failed quarantine stop the pass', async () => {
    const env = makeEnv();
    const a = env.store('node-a');
    await a.create(task);
    env.write(`${WAITING}/${KEY}/${'0'.repeat(40)}.json`, 'null');
    env.setMtime(`${WAITING}/${KEY}/${'0'.repeat(40)}.json`, Date.UTC(2024, 0, 1));
    const events: string[] = [];
    const stuck = faultyFs(env.fs, {
      rename: async (from) => {
        throw fsError('EACCES', 'rename', from);
      },
    });
    const b = env.store('node-b', { fs: stuck, onEvent: (e) => events.push(e.type) });
    expect((await b.listWaiting()).folders.map((f) => [f.sample.key, f.taskCount])).toEqual([[taskKey(task), 1]]);
    expect(events).toEqual(['quarantine-failed']);
  });

  it('names the operation and path when a claim fails for real', async () => {
    const env = makeEnv();
    const { key } = await env.store('node-a').create(task);
    env.mkdir('ref-updates/running/lock-1');
    const readOnly = faultyFs(env.fs, {
      rename: async (from) => {
        throw fsError('EROFS', 'rename', from);
      },
    });
    const error = await storeError(env.store('node-b', { fs: readOnly }).claim('lock-1', KEY));
    expect(error.message).toMatch(/^claim task failed \(EROFS\) at .*waiting\/[0-9a-f]{40}\/[0-9a-f]{40}\.json/);
    expect(error.message).toContain(`${KEY}/${key}.json`);
  });

  it('reports a store whose waiting folder is gone (unmounted, wiped) instead of listing nothing', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    const unmounted = faultyFs(env.fs, {
      readdir: async (path) => {
        throw fsError('ENOENT', 'scandir', path);
      },
    });
    const error = await storeError(env.store('node-b', { fs: unmounted }).listWaiting());
    expect(error.message).toContain('list waiting tasks failed (ENOENT)');
  });

  it('refuses names that would leave their folder', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await expect(store.claim('../escape', KEY)).rejects.toThrow(StoreError);
    await expect(store.claim('lock-1', '../../uri-state')).rejects.toThrow('invalid waiting folder name');
    await expect(store.finish('lock-1', ['../../uri-state/x.json'])).rejects.toThrow('invalid task file name');
  });
});
