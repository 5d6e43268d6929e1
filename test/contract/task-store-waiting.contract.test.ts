import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError, WaitingFolderRefusedError } from '../../src/errors.js';
import type { StoreStats } from '../../src/store/store-fs.js';
import type { StoreEvent, TaskStoreOptions } from '../../src/store/task-store.js';
import { FULL_SYNC_REF, encodeTask, uriKey, type Task } from '../../src/task/task.js';
import { useTempDirs } from '../support/temp-dir.js';
import { faultyFs } from './support/faulty-fs.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { WAITING, countingFs, fileOf, folderOf, waitingFiles, waitingRel } from './support/waiting-layout.js';

/**
 * DESIGN.md "Waiting folders (layout 2)": tasks wait in `waiting/<uriKey>/` (live) and
 * `waiting/<uriKey>.bulk/` (full syncs). Publish makes a folder as often as a claimer removes it
 * and never writes through anything else standing at its name; a claim takes a URI's folders
 * whole; tasks put back go to their own URI's folder and lane, mtime kept; each node learns a
 * folder once and lists waiting/ again only when it changed or a full listing is due.
 */
const RUNNING = 'ref-updates/running';
const CORRUPT = 'ref-updates/corrupt';
const LOCK = 'lock-1';
const URI = 'ssh://replica.example.com/p.git';
const OTHER_URI = 'ssh://replica.example.com/q.git';
const KEY = uriKey(URI);
const T1 = Date.UTC(2024, 5, 1);
const T2 = Date.UTC(2024, 5, 2);

const live = (ref: string, uri = URI): Task => ({ project: 'p', refs: [ref], uri, remote: 'mirror' });
const fullSync = (uri = URI): Task => ({ project: 'p', refs: [FULL_SYNC_REF], uri, remote: 'mirror' });

const tempDir = useTempDirs();

/** A folder outside the store, as a symlink's victim; its entries, to check that nothing was written there. */
function victimFolder(): string {
  const dir = tempDir('refrelay-victim');
  writeFileSync(join(dir, 'secret'), 'not for the store');
  mkdirSync(join(dir, 'sub'));
  return dir;
}

/** The lock component makes the lock folder; here the test plays that part. */
function holdLock(env: StoreEnv, lockName = LOCK): string {
  env.mkdir(`${RUNNING}/${lockName}`);
  return lockName;
}

/**
 * A node clock a minute ahead of every file time in the store (real or in memory): each change the
 * test makes is old for the node unless the test says otherwise. `advance` moves both readings on.
 */
function nodeClock(): { clock: NonNullable<TaskStoreOptions['clock']>; now: () => number; advance: (ms: number) => void } {
  let now = Date.now() + 60_000;
  let monotonic = 0;
  return {
    clock: { now: () => now, monotonic: () => monotonic },
    now: () => now,
    advance: (ms) => {
      now += ms;
      monotonic += ms;
    },
  };
}

async function storeError(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

describe.each(storeEnvs())('task store contract, publishing into waiting folders (%s)', (_, makeEnv) => {
  it('makes the folder of the URI and lane on the first publish and links the task into it', async () => {
    const env = makeEnv();
    const counting = countingFs(env.fs);
    const store = env.store('node-a', { fs: counting.fs });
    await store.open();
    counting.reset();

    const results = await store.createMany([live('refs/heads/main'), fullSync(), live('refs/heads/dev')]);

    expect(results.map((r) => r.created)).toEqual([true, true, true]);
    expect(env.list(WAITING)).toEqual([KEY, `${KEY}.bulk`]);
    expect(waitingFiles(env)).toEqual(
      [`${KEY}/${fileOf(live('refs/heads/main'))}`, `${KEY}/${fileOf(live('refs/heads/dev'))}`, `${KEY}.bulk/${fileOf(fullSync())}`].sort(),
    );
    expect(env.read(waitingRel(fullSync()))).toBe(encodeTask(fullSync()));
    // No check-then-rename: each task is linked in, which never replaces a file already there.
    expect(counting.calls).toMatchObject({ link: 3, rename: 0 });
    expect(env.list('ref-updates/building')).toEqual([]);
  });

  it('refuses to publish through a symlink in place of the folder, says so, and writes nothing outside the store', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const victim = victimFolder();
    const before = readdirSync(victim).sort();
    env.symlink(`${WAITING}/${KEY}`, victim);

    const error = await storeError(store.create(live('refs/heads/main')));

    expect(error.message).toBe(`create task: ${join(env.root, WAITING, KEY)} is a symbolic link, not a folder; refusing to write through it`);
    expect(readdirSync(victim).sort()).toEqual(before);
    expect(env.list('ref-updates/building')).toEqual([]);
    expect(env.list(WAITING)).toEqual([KEY]);
    // Other URIs are queued as usual.
    expect((await store.create(live('refs/heads/main', OTHER_URI))).created).toBe(true);
  });

  it('refuses to publish where a file stands in place of the folder, and leaves the file as it was', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    env.write(`${WAITING}/${KEY}.bulk`, 'not a folder');

    const error = await storeError(store.create(fullSync()));

    expect(error.message).toBe(`create task: ${join(env.root, WAITING, `${KEY}.bulk`)} is a regular file, not a folder; refusing to write through it`);
    expect(env.read(`${WAITING}/${KEY}.bulk`)).toBe('not a folder');
    expect(env.list('ref-updates/building')).toEqual([]);
  });

  it("createEach publishes every other task when a file stands in place of one URI's folder, and reports that one in its place", async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    env.write(`${WAITING}/${KEY}`, 'a task file of Gerrit');
    const blocked = live('refs/heads/main');
    const others = [live('refs/heads/main', OTHER_URI), fullSync()];

    const outcomes = await store.createEach([others[0]!, blocked, others[1]!]);

    expect(outcomes.map((outcome) => ('error' in outcome ? (outcome.error as Error).message : outcome.created))).toEqual([
      true,
      `create task: ${join(env.root, WAITING, KEY)} is a regular file, not a folder; refusing to write through it`,
      true,
    ]);
    const refused = outcomes[1]!;
    expect('error' in refused && refused.error).toBeInstanceOf(WaitingFolderRefusedError);
    expect(waitingFiles(env)).toEqual([`${uriKey(OTHER_URI)}/${fileOf(others[0]!)}`, KEY, `${KEY}.bulk/${fileOf(others[1]!)}`].sort());
    expect(env.read(`${WAITING}/${KEY}`)).toBe('a task file of Gerrit');
    expect(env.list('ref-updates/building')).toEqual([]);
  });

  it('makes the folder again when a claimer emptied and removed it between the check and the link', async () => {
    const env = makeEnv();
    const peer = env.store('node-b');
    await peer.create(live('refs/heads/queued'));
    holdLock(env);
    const claimed: string[] = [];
    const racing = faultyFs(env.fs, {
      link: async (from, to) => {
        // The claim happens after this publisher found the folder there, before its link.
        if (claimed.length === 0 && to.includes(`/waiting/${KEY}/`)) claimed.push(...(await peer.claim(LOCK, KEY)).map((t) => t.name));
        return env.fs.link(from, to);
      },
    });

    expect((await env.store('node-a', { fs: racing }).create(live('refs/heads/main'))).created).toBe(true);

    expect(claimed).toEqual([fileOf(live('refs/heads/queued'))]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(live('refs/heads/main'))}`]);
    expect(env.list('ref-updates/building')).toEqual([]);
  });

  it('gives up, naming the folder, when something removes it before every link', async () => {
    const env = makeEnv();
    await env.store('setup').open();
    const removing = faultyFs(env.fs, {
      link: async (from, to) => {
        await env.fs.rmdir(join(env.root, WAITING, KEY));
        return env.fs.link(from, to);
      },
    });

    const error = await storeError(env.store('node-a', { fs: removing }).create(live('refs/heads/main')));

    expect(error.message).toBe(`create task: ${join(env.root, WAITING, KEY)} keeps being removed under this writer`);
    expect(env.list('ref-updates/building')).toEqual([]);
  });
});

describe.each(storeEnvs())('task store contract, claiming a URI by its folders (%s)', (_, makeEnv) => {
  it('takes the tasks of both lanes, removes the emptied folders and leaves other URIs alone', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const tasks = [live('refs/heads/main'), live('refs/heads/dev'), fullSync()];
    await store.createMany([...tasks, live('refs/heads/main', OTHER_URI)]);
    holdLock(env);

    const claimed = await store.claim(LOCK, KEY);

    expect(claimed.map((t) => t.name).sort()).toEqual(tasks.map(fileOf).sort());
    expect(claimed.map((t) => t.task).sort((a, b) => fileOf(a).localeCompare(fileOf(b)))).toEqual(tasks.sort((a, b) => fileOf(a).localeCompare(fileOf(b))));
    expect(env.list(`${RUNNING}/${LOCK}`)).toEqual(tasks.map(fileOf).sort());
    expect(env.list(WAITING)).toEqual([uriKey(OTHER_URI)]);
  });

  it('leaves a task published after its readdir of the folder for the next claim, and the folder with it', async () => {
    const env = makeEnv();
    const peer = env.store('node-b');
    await peer.create(live('refs/heads/first'));
    let published = false;
    const racing = faultyFs(env.fs, {
      readdir: async (path) => {
        const names = await env.fs.readdir(path);
        if (!published && path.endsWith(`/waiting/${KEY}`)) {
          published = true;
          await peer.create(live('refs/heads/late'));
        }
        return names;
      },
    });
    const store = env.store('node-a', { fs: racing });
    holdLock(env, 'lock-a');
    holdLock(env, 'lock-b');

    expect((await store.claim('lock-a', KEY)).map((t) => t.task.refs[0])).toEqual(['refs/heads/first']);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(live('refs/heads/late'))}`]);
    expect((await store.claim('lock-b', KEY)).map((t) => t.task.refs[0])).toEqual(['refs/heads/late']);
    expect(env.list(WAITING)).toEqual([]);
  });

  it('claims nothing, and makes no folder, for a URI with nothing waiting', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(live('refs/heads/main', OTHER_URI));
    holdLock(env);
    expect(await store.claim(LOCK, KEY)).toEqual([]);
    expect(env.list(WAITING)).toEqual([uriKey(OTHER_URI)]);
  });
});

describe.each(storeEnvs())('task store contract, a waiting folder moved in as the claim folder (%s)', (_, makeEnv) => {
  /** The lock's part: waiting/<KEY> renamed to running/<LOCK>, with an owner record beside the tasks. */
  async function moveIn(env: StoreEnv): Promise<void> {
    await env.fs.rename(`${env.root}/${WAITING}/${KEY}`, `${env.root}/${RUNNING}/${LOCK}`);
    env.write(`${RUNNING}/${LOCK}/owner.json`, '{}');
  }

  it("reads the tasks where they are, takes the other lane's by rename, and sends what is not a task back to the waiting folder", async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const tasks = [live('refs/heads/main'), live('refs/heads/dev'), fullSync()];
    await store.createMany(tasks);
    env.write(`${WAITING}/${KEY}/notes.txt`, 'left by a person');
    await moveIn(env);

    const claimed = await store.claim(LOCK, KEY, KEY);

    expect(claimed.map((t) => t.name).sort()).toEqual(tasks.map(fileOf).sort());
    expect(env.list(`${RUNNING}/${LOCK}`)).toEqual([...tasks.map(fileOf), 'owner.json'].sort());
    expect(waitingFiles(env)).toEqual([`${KEY}/notes.txt`]);
    expect(env.read(`${WAITING}/${KEY}/notes.txt`)).toBe('left by a person');
  });

  it('gives back, unread, the tasks it is not told to keep: a late arrival goes to the waiting folder, made again', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(live('refs/heads/main'));
    await moveIn(env);
    const claimed = await store.claim(LOCK, KEY, KEY);
    // A client that looked the folder up before the rename still links into it.
    env.write(`${RUNNING}/${LOCK}/${fileOf(live('refs/heads/late'))}`, 'not read');

    expect(await store.giveBack(LOCK, KEY, new Set(claimed.map((t) => t.name)))).toEqual([fileOf(live('refs/heads/late'))]);

    expect(env.list(`${RUNNING}/${LOCK}`)).toEqual([fileOf(live('refs/heads/main')), 'owner.json'].sort());
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(live('refs/heads/late'))}`]);
    expect(env.read(`${WAITING}/${KEY}/${fileOf(live('refs/heads/late'))}`)).toBe('not read');
  });

  it('claims nothing from a claim folder that is gone (the lock taken over)', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    expect(await store.claim(LOCK, KEY, KEY)).toEqual([]);
    expect(await store.giveBack(LOCK, KEY, new Set())).toEqual([]);
  });
});

describe.each(storeEnvs())('task store contract, putting tasks back (%s)', (_, makeEnv) => {
  it('resets claimed tasks into the folder of their URI and lane, made again, with their mtimes', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.createMany([live('refs/heads/main'), fullSync()]);
    env.setMtime(waitingRel(live('refs/heads/main')), T1);
    env.setMtime(waitingRel(fullSync()), T2);
    holdLock(env);
    const claimed = await store.claim(LOCK, KEY);
    expect(env.list(WAITING)).toEqual([]);

    expect((await store.reset(LOCK, claimed)).sort()).toEqual([fileOf(live('refs/heads/main')), fileOf(fullSync())].sort());

    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(live('refs/heads/main'))}`, `${KEY}.bulk/${fileOf(fullSync())}`].sort());
    expect(env.mtime(waitingRel(live('refs/heads/main')))).toBe(T1);
    expect(env.mtime(waitingRel(fullSync()))).toBe(T2);
    expect(env.list(`${RUNNING}/${LOCK}`)).toEqual([]);
  });

  it("recovers a tombstone's tasks, each into its own URI's folder and lane, with their mtimes", async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.createMany([live('refs/heads/main'), fullSync()]);
    env.setMtime(waitingRel(live('refs/heads/main')), T1);
    env.setMtime(waitingRel(fullSync()), T2);
    const tomb = `${KEY}.tomb.node-b.t1`;
    holdLock(env, `${tomb}/lease-1`);
    await store.claim(`${tomb}/lease-1`, KEY);
    // A task of another URI that ended up in this lock folder goes to its own URI's folder.
    const stray = live('refs/heads/main', OTHER_URI);
    env.write(`${RUNNING}/${tomb}/lease-1/${fileOf(stray)}`, encodeTask(stray));
    env.setMtime(`${RUNNING}/${tomb}/lease-1/${fileOf(stray)}`, T1);

    expect(await store.recoverLockFolder(tomb)).toEqual({ recovered: 3, removed: true });

    expect(env.list(RUNNING)).toEqual([]);
    expect(waitingFiles(env)).toEqual(
      [`${KEY}/${fileOf(live('refs/heads/main'))}`, `${KEY}.bulk/${fileOf(fullSync())}`, `${uriKey(OTHER_URI)}/${fileOf(stray)}`].sort(),
    );
    expect([waitingRel(live('refs/heads/main')), waitingRel(fullSync()), waitingRel(stray)].map((rel) => env.mtime(rel))).toEqual([T1, T2, T1]);
  });

  it('retries failed tasks into the folder of their URI and lane, with their mtimes', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    for (const task of [live('refs/heads/main'), fullSync()]) {
      const { uriKey: key, name } = await store.parkFailed(task, { reason: 'gave up' });
      env.setMtime(`ref-updates/failed/${key}/${name}`, task.refs[0] === FULL_SYNC_REF ? T2 : T1);
    }

    expect(await store.retryFailed(() => true)).toBe(2);

    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(live('refs/heads/main'))}`, `${KEY}.bulk/${fileOf(fullSync())}`].sort());
    expect(env.mtime(waitingRel(live('refs/heads/main')))).toBe(T1);
    expect(env.mtime(waitingRel(fullSync()))).toBe(T2);
    expect(env.list('ref-updates/failed')).toEqual([]);
  });
});

describe.each(storeEnvs())('task store contract, learning waiting folders (%s)', (_, makeEnv) => {
  it('learns a new folder: its URI and lane, task count, oldest mtime and the oldest task as its sample', async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const peer = env.store('node-b');
    await peer.createMany([live('refs/heads/main'), live('refs/heads/dev'), fullSync()]);
    env.setMtime(waitingRel(live('refs/heads/main')), T2);
    env.setMtime(waitingRel(live('refs/heads/dev')), T1);
    env.setMtime(waitingRel(fullSync()), T2);

    const listing = await env.store('node-a', { clock }).listWaiting();

    const folders = [...listing.folders].sort((a, b) => a.folder.localeCompare(b.folder));
    expect(folders.map((f) => [f.folder, f.uriKey, f.lane, f.taskCount, f.oldestMtimeMs, f.sample.task])).toEqual([
      [KEY, KEY, 'live', 2, T1, live('refs/heads/dev')],
      [`${KEY}.bulk`, KEY, 'bulk', 1, T2, fullSync()],
    ]);
    expect(folders[0]?.sample).toMatchObject({ name: fileOf(live('refs/heads/dev')), mtimeMs: T1 });
    expect(listing).toMatchObject({ changed: new Set([KEY]), unlearned: 0, loose: [] });
    expect(listing.folder(`${KEY}.bulk`)).toBe(folders[1]);
  });

  it('learns a folder of one task from its read alone, and a folder of more by an lstat of each task, the oldest as its sample', async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const counting = countingFs(env.fs);
    const node = env.store('node-a', { clock, fs: counting.fs });
    await env.store('node-b').createMany([live('refs/heads/main'), live('refs/heads/main', OTHER_URI), live('refs/heads/dev', OTHER_URI)]);
    env.setMtime(waitingRel(live('refs/heads/main')), T2);
    env.setMtime(waitingRel(live('refs/heads/main', OTHER_URI)), T1);
    env.setMtime(waitingRel(live('refs/heads/dev', OTHER_URI)), T2);
    await node.open();
    counting.reset();

    const listing = await node.listWaiting();

    // waiting/ and each folder: one lstat and one readdir; then one read per folder, and an lstat
    // of each task only in the folder of two.
    expect(counting.calls).toMatchObject({ lstat: 2 + 1 + 2, readdir: 1 + 2, readBounded: 2 });
    const summary = (folder: string) => {
      const learned = listing.folder(folder);
      return [learned?.taskCount, learned?.oldestMtimeMs, learned?.sample.task.refs[0]];
    };
    expect(summary(KEY)).toEqual([1, T2, 'refs/heads/main']);
    expect(summary(uriKey(OTHER_URI))).toEqual([2, T1, 'refs/heads/main']);
  });

  it('does no readdir and opens nothing on a pass over an unchanged, old waiting/; a task joining a known folder waits for its claim', async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const counting = countingFs(env.fs);
    const node = env.store('node-a', { clock, fs: counting.fs });
    await env.store('node-b').createMany([live('refs/heads/main'), live('refs/heads/main', OTHER_URI)]);
    const first = await node.listWaiting();
    await env.store('node-b').create(live('refs/heads/dev'));
    counting.reset();

    const second = await node.listWaiting();

    expect(counting.calls).toMatchObject({ readdir: 0, readBounded: 0, open: 0, lstat: 1 });
    expect(counting.total()).toBe(1);
    expect(second.folders).toEqual(first.folders);
    expect(first.changed).toEqual(new Set([KEY, uriKey(OTHER_URI)]));
    expect(second.changed).toEqual(new Set());
    expect(second.folders.find((f) => f.folder === KEY)?.taskCount).toBe(1);
  });

  it("reports a URI whose folder a peer's claim removed as changed, once", async () => {
    const env = makeEnv();
    const { clock, advance } = nodeClock();
    const node = env.store('node-a', { clock });
    const peer = env.store('node-b');
    await peer.createMany([live('refs/heads/main'), live('refs/heads/main', OTHER_URI)]);
    await node.listWaiting();
    holdLock(env);
    await peer.claim(LOCK, KEY);
    advance(1_000);

    const after = await node.listWaiting();
    const again = await node.listWaiting();

    expect([after.changed, after.folders.map((f) => f.folder)]).toEqual([new Set([KEY]), [uriKey(OTHER_URI)]]);
    expect(again.changed).toEqual(new Set());
  });

  it('lists waiting/ again in full after fullListingIntervalMs, though its stamp did not change (a stale attribute cache)', async () => {
    const env = makeEnv();
    const { clock, advance } = nodeClock();
    let frozen: StoreStats | undefined;
    const staleCache = faultyFs(env.fs, {
      lstat: async (path) => {
        if (path !== join(env.root, WAITING)) return env.fs.lstat(path);
        frozen ??= await env.fs.lstat(path);
        return frozen;
      },
    });
    const node = env.store('node-a', { clock, fs: staleCache, fullListingIntervalMs: 300_000 });
    const peer = env.store('node-b');
    await peer.create(live('refs/heads/main'));
    expect((await node.listWaiting()).folders.map((f) => f.folder)).toEqual([KEY]);
    await peer.create(live('refs/heads/main', OTHER_URI));

    advance(299_000);
    expect((await node.listWaiting()).folders.map((f) => f.folder)).toEqual([KEY]);
    advance(1_000);
    expect((await node.listWaiting()).folders.map((f) => f.folder).sort()).toEqual([KEY, uriKey(OTHER_URI)].sort());
  });

  it("leaves a change it did not make unread until the last read is unreadChangesMayWaitMs old: a peer's new folder, its own claim", async () => {
    const env = makeEnv();
    const { clock, advance } = nodeClock();
    const reads: number[] = [];
    const fs = faultyFs(env.fs, {
      readdir: (path) => {
        if (path === join(env.root, WAITING)) reads.push(reads.length);
        return env.fs.readdir(path);
      },
    });
    const node = env.store('node-a', { clock, fs });
    const peer = env.store('node-b');
    const mayWait = { unreadChangesMayWaitMs: 14_000 };
    await peer.createMany([live('refs/heads/main'), live('refs/heads/main', OTHER_URI)]);
    expect((await node.listWaiting(mayWait)).folders).toHaveLength(2);
    holdLock(env);
    await node.claim(LOCK, KEY);
    await peer.create(live('refs/heads/main', 'ssh://replica.example.com/new.git'));
    advance(13_000);

    // A listing's folders are read when asked for: taken before the next listing.
    const before = (await node.listWaiting(mayWait)).folders.map((f) => f.folder);
    const readsBefore = reads.length;
    advance(1_000);
    const after = await node.listWaiting(mayWait);

    expect([readsBefore, reads.length]).toEqual([1, 2]);
    expect(before).toEqual([uriKey(OTHER_URI)]);
    expect(after.folders.map((f) => f.folder).sort()).toEqual([uriKey(OTHER_URI), uriKey('ssh://replica.example.com/new.git')].sort());
  });

  it('reads waiting/ at the next listing after a write of its own, or one seen on this machine, whatever unreadChangesMayWaitMs says', async () => {
    const env = makeEnv();
    const { clock, advance } = nodeClock();
    const node = env.store('node-a', { clock });
    const peer = env.store('node-b');
    const mayWait = { unreadChangesMayWaitMs: 60_000 };
    await node.listWaiting(mayWait);
    await node.create(live('refs/heads/main'));
    advance(1_000);
    expect((await node.listWaiting(mayWait)).folders.map((f) => f.folder)).toEqual([KEY]);

    await peer.create(live('refs/heads/main', OTHER_URI));
    advance(1_000);
    expect((await node.listWaiting(mayWait)).folders.map((f) => f.folder)).toEqual([KEY]);
    node.noteLocalWrite();
    expect((await node.listWaiting(mayWait)).folders.map((f) => f.folder).sort()).toEqual([KEY, uriKey(OTHER_URI)].sort());
  });

  it('learns a quarter of learnPerPass folders on its first pass and at most learnPerPass on the next, and counts the others as unlearned', async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const uris = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `ssh://replica.example.com/r${i}.git`);
    await env.store('node-b').createMany(uris.map((uri) => live('refs/heads/main', uri)));
    const node = env.store('node-a', { clock, learnPerPass: 4 });

    const passes: Array<[number, number]> = [];
    for (let i = 0; i < 4; i++) {
      const listing = await node.listWaiting();
      passes.push([listing.folders.length, listing.unlearned]);
    }

    expect(passes).toEqual([
      [1, 9],
      [5, 5],
      [9, 1],
      [10, 0],
    ]);
  });

  it("leaves a new folder another node is preferred for unread for that node's turn: one claimed meanwhile is never read, one left is learned as first listed then", async () => {
    const env = makeEnv();
    const { clock, now, advance } = nodeClock();
    const mine = 'ssh://replica.example.com/mine.git';
    const read: string[] = [];
    const fs = faultyFs(env.fs, {
      readdir: async (path) => {
        read.push(path.slice(path.lastIndexOf('/') + 1));
        return env.fs.readdir(path);
      },
    });
    const node = env.store('node-a', { clock, fs });
    const turn = { turnMs: (key: string) => (key === uriKey(mine) ? undefined : 4_000) };
    await node.listWaiting({ preferredTurn: turn }); // the backlog it starts on: none
    const peer = env.store('node-b');
    await peer.createMany([live('refs/heads/a'), live('refs/heads/b', OTHER_URI), live('refs/heads/c', mine)]);
    const firstListedAt = now();

    const first = await node.listWaiting({ preferredTurn: turn });
    expect([first.folders.map((f) => f.uriKey), first.leftToPreferred, first.unlearned]).toEqual([[uriKey(mine)], 2, 0]);
    advance(3_999);
    expect((await node.listWaiting({ preferredTurn: turn })).leftToPreferred).toBe(2);
    holdLock(env);
    await peer.claim(LOCK, KEY);
    advance(1);
    const after = await node.listWaiting({ preferredTurn: turn });

    expect(after.folders.map((f) => [f.uriKey, f.seenAt]).sort()).toEqual(
      [
        [uriKey(mine), firstListedAt],
        [uriKey(OTHER_URI), firstListedAt],
      ].sort(),
    );
    expect(after.leftToPreferred).toBe(0);
    expect(read).not.toContain(KEY);
    expect(read).toContain(uriKey(OTHER_URI));
  });

  it('learns again a folder it claimed from, without listing waiting/, when an update arrived during the claim', async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const peer = env.store('node-b');
    await peer.create(live('refs/heads/first'));
    let racing = false;
    const base = countingFs(env.fs);
    const fs = faultyFs(base.fs, {
      readdir: async (path) => {
        const names = await base.fs.readdir(path);
        if (racing && path.endsWith(`/waiting/${KEY}`)) {
          racing = false;
          await peer.create(live('refs/heads/late'));
        }
        return names;
      },
    });
    const node = env.store('node-a', { clock, fs });
    expect((await node.listWaiting()).folders.map((f) => f.sample.task.refs[0])).toEqual(['refs/heads/first']);
    holdLock(env);
    racing = true;
    await node.claim(LOCK, KEY);
    // What a pass that follows a claim closely sees: the URI changed, its folder not learned yet.
    const cached = await node.listWaiting({ cached: true });
    expect([cached.changed, cached.folders]).toEqual([new Set([KEY]), []]);
    base.reset();

    const { folders, changed } = await node.listWaiting();

    expect(folders.map((f) => [f.folder, f.taskCount, f.sample.task.refs[0]])).toEqual([[KEY, 1, 'refs/heads/late']]);
    expect(changed).toEqual(new Set([KEY]));
    expect(base.calls.readdir).toBe(1); // the folder's, not waiting/'s
  });

  it("moves a symlink, or a file under a bulk folder's name, to corrupt/ unread and not followed; leaves a plain file under a live folder's name (Gerrit's) alone", async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const events: StoreEvent[] = [];
    const node = env.store('node-a', { clock, onEvent: (event) => events.push(event) });
    await node.create(live('refs/heads/main', OTHER_URI));
    const victim = victimFolder();
    const before = readdirSync(victim).sort();
    const gerritTask = 'e'.repeat(40);
    env.symlink(`${WAITING}/${KEY}`, victim);
    env.write(`${WAITING}/${KEY}.bulk`, 'a file');
    env.write(`${WAITING}/${gerritTask}`, '{"project":"p","refs":["refs/heads/main"],"uri":"ssh://h/p.git","remote":"m"}\n');

    const listing = await node.listWaiting();

    expect(listing).toMatchObject({ unlearned: 0, loose: [] });
    expect(listing.folders.map((f) => f.folder)).toEqual([uriKey(OTHER_URI)]);
    expect(env.list(WAITING)).toEqual([uriKey(OTHER_URI), gerritTask].sort());
    const reasons = events.flatMap((e) => (e.type === 'quarantined' ? [[e.path, e.reason]] : [])).sort();
    expect(reasons).toEqual([
      [join(env.root, WAITING, KEY), 'a symbolic link where a waiting folder is expected'],
      [join(env.root, WAITING, `${KEY}.bulk`), 'a regular file where a waiting folder is expected'],
    ]);
    expect(env.list(CORRUPT).filter((name) => !name.endsWith('.reason'))).toHaveLength(2);
    expect(readdirSync(victim).sort()).toEqual(before);
  });
  it('removes an empty folder older than emptyFolderAgeMs, and keeps a younger one', async () => {
    const env = makeEnv();
    const { clock, now } = nodeClock();
    const node = env.store('node-a', { clock, emptyFolderAgeMs: () => 30_000 });
    await node.open();
    env.mkdir(`${WAITING}/${KEY}`);
    env.mkdir(`${WAITING}/${KEY}.bulk`);
    env.setMtime(`${WAITING}/${KEY}`, now() - 31_000);
    env.setMtime(`${WAITING}/${KEY}.bulk`, now() - 29_000);

    const listing = await node.listWaiting();

    expect(listing).toMatchObject({ folders: [], unlearned: 0 });
    expect(env.list(WAITING)).toEqual([`${KEY}.bulk`]);
  });

  it('sorts a flat task file into its folder with its mtime, and learns the folder it went into', async () => {
    const env = makeEnv();
    const { clock } = nodeClock();
    const node = env.store('node-a', { clock });
    await node.create(live('refs/heads/main'));
    await node.listWaiting();
    const flat = live('refs/heads/flat');
    env.write(`${WAITING}/${fileOf(flat)}`, encodeTask(flat));
    env.setMtime(`${WAITING}/${fileOf(flat)}`, T1);

    const { folders, loose } = await node.listWaiting();

    expect(loose).toEqual([]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(flat)}`, `${KEY}/${fileOf(live('refs/heads/main'))}`].sort());
    expect(env.mtime(waitingRel(flat))).toBe(T1);
    expect(folders.map((f) => [f.folder, f.taskCount, f.oldestMtimeMs, f.sample.task])).toEqual([[folderOf(flat), 2, T1, flat]]);
  });
});
