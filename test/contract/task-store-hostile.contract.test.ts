import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORE_RECORD_MAX_BYTES } from '../../src/runtime/bounded-read.js';
import { encodeTask, taskKey, uriKey, type Task } from '../../src/task/task.js';
import { useTempDirs } from '../support/temp-dir.js';
import { faultyFs, fsError } from './support/faulty-fs.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { WAITING, waitingFiles } from './support/waiting-layout.js';

/**
 * The store is untrusted input (DESIGN.md invariant 8): entries of any type and size that
 * refrelay never wrote are refused by type and size, never opened, followed or echoed, and
 * cost only themselves.
 */
const RUNNING = 'ref-updates/running';
const CORRUPT = 'ref-updates/corrupt';
const SECRET = 'root:$6$not-for-any-log:19000:0:99999:7:::';
const uri = 'ssh://replica.example.com/p.git';
const good: Task = { project: 'p', refs: ['refs/heads/main'], uri, remote: 'mirror' };
const fileOf = (t: Task): string => `${taskKey(t)}.json`;
const nameFor = (i: number): string => `${i.toString(16).padStart(40, '0')}.json`;
/** The name of `good`'s waiting folder. */
const KEY = uriKey(uri);

const tempDir = useTempDirs();

/** A folder outside the store with a secret and task-like files, as a symlink's victim. */
function victimFolder(): string {
  const dir = tempDir('refrelay-victim');
  writeFileSync(join(dir, 'secret'), SECRET);
  writeFileSync(join(dir, 'owner.json'), '{"nodeId":"x","leaseId":"y","counter":1}');
  writeFileSync(join(dir, fileOf(good)), JSON.stringify({ version: 1, ...good, refs: ['refs/heads/victim'] }));
  mkdirSync(join(dir, 'sub'));
  return dir;
}

function reasonsText(env: StoreEnv): string {
  return env
    .list(CORRUPT)
    .filter((name) => name.endsWith('.reason'))
    .map((name) => env.read(`${CORRUPT}/${name}`))
    .join('\n');
}

function reasonFor(env: StoreEnv, name: string): string | undefined {
  for (const file of env.list(CORRUPT).filter((n) => n.endsWith('.reason'))) {
    const record = JSON.parse(env.read(`${CORRUPT}/${file}`)) as { reason: string; originalPath: string };
    if (record.originalPath.endsWith(`/${name}`)) return record.reason;
  }
  return undefined;
}

describe.each(storeEnvs())('task store contract, hostile entries (%s)', (_, makeEnv) => {
  it('moves a FIFO, a symlink and an oversized file out of waiting folders unread, and lists the valid task', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good);
    const secretFile = join(victimFolder(), 'secret');
    // Each in a folder of its own, where it is the oldest (the only) entry a node learns the folder by.
    const folders = [1, 2, 3].map((i) => `${WAITING}/${String(i).repeat(40)}`);
    for (const folder of folders) env.mkdir(folder);
    env.mkfifo(`${folders[0]}/${nameFor(1)}`);
    env.symlink(`${folders[1]}/${nameFor(2)}`, secretFile);
    env.writeSized(`${folders[2]}/${nameFor(3)}`, STORE_RECORD_MAX_BYTES + 1);

    const listed = await store.listWaiting();

    expect(listed.folders.map((f) => f.sample.name)).toEqual([fileOf(good)]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(good)}`]);
    expect(reasonFor(env, nameFor(1))).toBe('a FIFO where a file is expected');
    expect(reasonFor(env, nameFor(2))).toBe('a symbolic link where a file is expected');
    expect(reasonFor(env, nameFor(3))).toBe(`${STORE_RECORD_MAX_BYTES + 1} bytes, over the ${STORE_RECORD_MAX_BYTES}-byte limit`);
    expect(reasonsText(env)).not.toContain('not-for-any-log');
    expect(readFileSync(secretFile, 'utf8')).toBe(SECRET);
  });

  it('moves a FIFO, a symlink and a folder under a task name at the top of waiting/ out unread, and sorts the valid flat task', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.open();
    const secretFile = join(victimFolder(), 'secret');
    env.mkfifo(`${WAITING}/${nameFor(1)}`);
    env.symlink(`${WAITING}/${nameFor(2)}`, secretFile);
    env.mkdir(`${WAITING}/${nameFor(3)}`);
    env.write(`${WAITING}/${fileOf(good)}`, JSON.stringify({ version: 1, ...good }));

    const listed = await store.listWaiting();

    expect(listed).toMatchObject({ unlearned: 0, loose: [] });
    expect(listed.folders.map((f) => f.sample.name)).toEqual([fileOf(good)]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(good)}`]);
    expect(reasonFor(env, nameFor(1))).toBe('a FIFO where a file is expected');
    expect(reasonFor(env, nameFor(2))).toBe('a symbolic link where a file is expected');
    expect(reasonFor(env, nameFor(3))).toBe('a directory where a file is expected');
    expect(reasonsText(env)).not.toContain('not-for-any-log');
    expect(readFileSync(secretFile, 'utf8')).toBe(SECRET);
  });

  it('moves a retry state that is not a plain file to corrupt/ and reads it as no state', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good); // makes the layout
    const key = uriKey(uri);
    env.mkfifo(`uri-state/${key}.json`);

    expect(await store.readUriState(key)).toBeUndefined();

    expect(env.list('uri-state')).toEqual([]);
    expect(reasonFor(env, `${key}.json`)).toBe('a FIFO where a file is expected');
    await store.writeUriState(key, { attempts: 1, notBefore: 5 });
    expect(await store.readUriState(key)).toMatchObject({ attempts: 1 });
  });

  it('reads the node records that are plain files and moves the others aside', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good);
    env.write('nodes/a.json', '{"nodeId":"a"}');
    env.mkfifo('nodes/fifo.json');
    env.writeSized('nodes/huge.json', STORE_RECORD_MAX_BYTES + 1);

    const files = await store.readNodeRecordFiles();
    expect(files.map((file) => [file.name, file.record])).toEqual([['a.json', { nodeId: 'a' }]]);
    expect(env.list('nodes')).toEqual(['a.json']);
  });

  it('clears a tombstone holding a directory named owner.json: tasks back to waiting, the directory to corrupt/', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good);
    const tomb = `${'a'.repeat(40)}.tomb.node-b.t1`;
    env.mkdir(`${RUNNING}/${tomb}/lease-1/owner.json`);
    env.mkdir(`${RUNNING}/${tomb}/owner.json`);
    env.write(`${RUNNING}/${tomb}/lease-1/junk.tmp`, 'x');
    expect((await store.claim(`${tomb}/lease-1`, KEY)).map((t) => t.name)).toEqual([fileOf(good)]);
    expect(env.list(WAITING)).toEqual([]);

    expect(await store.recoverLockFolder(tomb)).toEqual({ recovered: 1, removed: true });

    expect(env.list(RUNNING)).toEqual([]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(good)}`]);
    expect(reasonsText(env)).toContain('a directory named \\"owner.json\\" in a lock folder');
    expect(env.list(CORRUPT).filter((name) => !name.endsWith('.reason'))).toHaveLength(2);
  });

  it('moves a lock folder this node may not list (EACCES) to corrupt/ whole instead of failing every recovery of it', async () => {
    const env = makeEnv();
    await env.store('node-a').create(good);
    const tomb = `${'d'.repeat(40)}.tomb.node-b.t3`;
    env.mkdir(`${RUNNING}/${tomb}`);
    const denied = faultyFs(env.fs, {
      readdir: async (path) => {
        if (path.endsWith(tomb)) throw fsError('EACCES', 'scandir', path);
        return env.fs.readdir(path);
      },
    });

    expect(await env.store('node-a', { fs: denied }).recoverLockFolder(tomb)).toEqual({ recovered: 0, removed: true });

    expect(env.list(RUNNING)).toEqual([]);
    expect(reasonFor(env, tomb)).toBe('a lock folder this node may not read (EACCES)');
  });

  it('marks a lock folder this node may not list (EACCES) unreadable and leaves a failed one out of the views, which list the others', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const other: Task = { ...good, uri: 'ssh://replica.example.com/q.git' };
    for (const task of [good, other]) await store.parkFailed(task, { reason: 'rejected' });
    const [deniedLock, openLock, partLock] = ['d'.repeat(40), 'e'.repeat(40), 'f'.repeat(40)];
    for (const lock of [deniedLock, openLock]) env.mkdir(`${RUNNING}/${lock}`);
    for (const lease of ['node-b.l1', 'node-b.l2']) env.mkdir(`${RUNNING}/${partLock}/${lease}`);
    env.write(`${RUNNING}/${partLock}/node-b.l2/${fileOf(good)}`, JSON.stringify({ version: 1, ...good }));
    const denied = faultyFs(env.fs, {
      readdir: async (path) => {
        if (path.endsWith(`/${deniedLock}`) || path.endsWith('/node-b.l1') || path.endsWith(`/failed/${KEY}`)) throw fsError('EACCES', 'scandir', path);
        return env.fs.readdir(path);
      },
    });
    const view = env.store('node-a', { fs: denied });

    // Listed and marked, so `wait` counts them as pushes under way; `status` leaves out the whole one.
    expect((await view.listRunning()).map((lock) => [lock.lockName, lock.unreadable, lock.tasks.length]).sort()).toEqual([
      [deniedLock, 'whole', 0],
      [openLock, false, 0],
      [partLock, 'part', 1],
    ]);
    expect((await view.listFailed()).map((task) => task.task.uri)).toEqual([other.uri]);
    expect(env.list(RUNNING).sort()).toEqual([deniedLock, openLock, partLock]);
  });

  it('moves a claim folder this node may not list (EACCES) out of a tombstone to corrupt/, and recovers the rest', async () => {
    const env = makeEnv();
    await env.store('node-a').listWaiting();
    const tomb = `${'d'.repeat(40)}.tomb.node-b.t3`;
    for (const lease of ['node-b.l1', 'node-b.l2']) env.mkdir(`${RUNNING}/${tomb}/${lease}`);
    env.write(`${RUNNING}/${tomb}/node-b.l2/${fileOf(good)}`, JSON.stringify({ version: 1, ...good }));
    const denied = faultyFs(env.fs, {
      readdir: async (path) => {
        if (path.endsWith('/node-b.l1')) throw fsError('EACCES', 'scandir', path);
        return env.fs.readdir(path);
      },
    });

    expect(await env.store('node-a', { fs: denied }).recoverLockFolder(tomb)).toEqual({ recovered: 1, removed: true });

    expect(env.list(RUNNING)).toEqual([]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(good)}`]);
    expect(reasonFor(env, 'node-b.l1')).toBe('a lock folder this node may not read (EACCES)');
  });

  it('leaves a name with a backslash in running/ out of the running view, and moves one inside a tombstone to corrupt/, recovering the rest', async () => {
    const env = makeEnv();
    await env.store('node-a').listWaiting();
    env.mkdir(`${RUNNING}/x\\y`);
    const tomb = `${'d'.repeat(40)}.tomb.node-b.t3`;
    env.mkdir(`${RUNNING}/${tomb}/a\\b`);
    env.mkdir(`${RUNNING}/${tomb}/node-b.l1`);
    env.write(`${RUNNING}/${tomb}/node-b.l1/${fileOf(good)}`, JSON.stringify({ version: 1, ...good }));
    const store = env.store('node-a');

    expect((await store.listRunning()).map((lock) => lock.lockName)).toEqual([tomb]);
    expect(await store.recoverLockFolder(tomb)).toEqual({ recovered: 1, removed: true });

    expect(env.list(RUNNING)).toEqual(['x\\y']);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf(good)}`]);
    expect(reasonFor(env, 'a\\b')).toBe('a directory named "a\\\\b" in a lock folder, which refrelay never writes');
  });

  it('moves a waiting folder this node may not list (EACCES) to corrupt/ whole instead of failing every listing', async () => {
    const env = makeEnv();
    const other: Task = { ...good, uri: 'ssh://replica.example.com/q.git' };
    await env.store('node-a').createMany([good, other]);
    const denied = faultyFs(env.fs, {
      readdir: async (path) => {
        if (path.endsWith(`/waiting/${KEY}`)) throw fsError('EACCES', 'scandir', path);
        return env.fs.readdir(path);
      },
    });

    const { folders } = await env.store('node-b', { fs: denied }).listWaiting();

    expect(folders.map((folder) => folder.folder)).toEqual([uriKey(other.uri)]);
    expect(env.list(WAITING)).toEqual([uriKey(other.uri)]);
    expect(reasonFor(env, KEY)).toBe('a waiting folder this node may not read (EACCES)');
    // Kept whole for an operator, its task in it.
    const moved = env.list(CORRUPT).find((name) => name.startsWith(`${KEY}.`) && !name.endsWith('.reason'));
    expect(env.list(`${CORRUPT}/${moved}`)).toEqual([fileOf(good)]);
  });

  it('moves a waiting folder whose tasks this node may not look at (listable, not searchable: EACCES) to corrupt/ instead of failing every listing', async () => {
    const env = makeEnv();
    const second: Task = { ...good, refs: ['refs/heads/second'] };
    const other: Task = { ...good, uri: 'ssh://replica.example.com/q.git' };
    await env.store('node-a').createMany([good, second, other]);
    const denied = faultyFs(env.fs, {
      lstat: async (path) => {
        if (path.includes(`/waiting/${KEY}/`)) throw fsError('EACCES', 'lstat', path);
        return env.fs.lstat(path);
      },
    });

    const { folders } = await env.store('node-b', { fs: denied }).listWaiting();

    expect(folders.map((folder) => folder.folder)).toEqual([uriKey(other.uri)]);
    expect(env.list(WAITING)).toEqual([uriKey(other.uri)]);
    expect(reasonFor(env, KEY)).toBe('a waiting folder this node may not read (EACCES)');
    const moved = env.list(CORRUPT).find((name) => name.startsWith(`${KEY}.`) && !name.endsWith('.reason'));
    expect(env.list(`${CORRUPT}/${moved}`)).toEqual([fileOf(good), fileOf(second)].sort());
  });

  it('claims a URI whose bulk folder holds a folder under the name of a task claimed from its live folder, and the listing moves that folder to corrupt/', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good);
    env.mkdir(`${WAITING}/${KEY}.bulk/${fileOf(good)}`);
    env.mkdir(`${RUNNING}/lock-1`);

    expect((await store.claim('lock-1', KEY)).map((task) => task.name)).toEqual([fileOf(good)]);

    expect((await env.store('node-b').listWaiting()).folders).toEqual([]);
    expect(reasonFor(env, fileOf(good))).toMatch(/directory/);
  });

  it('publishes a task whose name is taken by something else (garbage, a FIFO), moving that aside, and keeps the same task queued once', async () => {
    for (const plant of [(env: StoreEnv, path: string) => env.write(path, 'garbage'), (env: StoreEnv, path: string) => env.mkfifo(path)]) {
      const env = makeEnv();
      const store = env.store('node-a');
      await store.create({ ...good, refs: ['refs/heads/other'] });
      const path = `${WAITING}/${KEY}/${fileOf(good)}`;
      env.mkdir(`${WAITING}/${KEY}`);
      plant(env, path);

      expect((await store.create(good)).created).toBe(true);

      expect(env.read(path)).toBe(encodeTask(good));
      expect(reasonFor(env, fileOf(good))).toMatch(/^(a file of 7 bytes|a FIFO) under a task's name, whose file is \d+ bytes$/);
      expect((await store.create(good)).created).toBe(false);
      expect(env.read(path)).toBe(encodeTask(good));
    }
  });

  it('links a task again when what held its name went between the refused link and the look at it', async () => {
    const env = makeEnv();
    await env.store('node-a').create({ ...good, refs: ['refs/heads/other'] });
    const path = `${WAITING}/${KEY}/${fileOf(good)}`;
    env.write(path, 'garbage');
    let taken = false;
    // A peer's listing moves the garbage away just after this link found the name taken.
    const racing = faultyFs(env.fs, {
      link: async (from, to) => {
        if (!to.endsWith(`/${KEY}/${fileOf(good)}`) || taken) return env.fs.link(from, to);
        taken = true;
        await env.fs.unlink(to);
        throw fsError('EEXIST', 'link', to);
      },
    });

    expect((await env.store('node-a', { fs: racing }).create(good)).created).toBe(true);
    expect(env.read(path)).toBe(encodeTask(good));
  });

  it('retries a failed task whose name in waiting/ holds garbage: the garbage goes to corrupt/, the task waits', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good);
    env.mkdir(`${RUNNING}/lock-1`);
    await store.claim('lock-1', KEY);
    await store.fail('lock-1', [fileOf(good)], { reason: 'rejected' });
    const path = `${WAITING}/${KEY}/${fileOf(good)}`;
    env.mkdir(`${WAITING}/${KEY}`);
    env.write(path, 'garbage');

    expect(await store.retryFailed(() => true)).toBe(1);

    expect(env.read(path)).toBe(encodeTask(good));
    expect((await store.listFailed()).map((failed) => failed.name)).toEqual([]);
  });

  it('parks failed tasks in a real failed/<uriKey>/ folder even when a symlink stands at that name', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(good);
    const victim = victimFolder();
    const before = readdirSync(victim).sort();
    env.symlink(`ref-updates/failed/${uriKey(uri)}`, victim);
    env.mkdir(`${RUNNING}/lock-1`);
    expect((await store.claim('lock-1', KEY)).map((t) => t.name)).toEqual([fileOf(good)]);

    expect(await store.fail('lock-1', [fileOf(good)], { reason: 'rejected' })).toEqual([fileOf(good)]);

    expect((await store.listFailed()).map((failed) => failed.name)).toEqual([fileOf(good)]);
    expect(reasonFor(env, uriKey(uri))).toBe('a symbolic link where a failed-tasks folder is expected');
    expect(readdirSync(victim).sort()).toEqual(before);
  });

  it('never looks through a lock folder that is a symlink: the link goes to corrupt/, the folder it names stays intact', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create({ ...good, refs: ['refs/heads/other'] });
    const victim = victimFolder();
    const before = readdirSync(victim).sort();
    const tomb = `${'b'.repeat(40)}.tomb.node-b.t2`;
    env.symlink(`${RUNNING}/${tomb}`, victim);
    env.symlink(`${RUNNING}/${'c'.repeat(40)}`, victim);

    expect((await store.listRunning()).map((lock) => lock.lockName)).toEqual([]);
    expect(await store.recoverLockFolder(tomb)).toEqual({ recovered: 0, removed: true });

    expect(env.list(RUNNING)).toEqual(['c'.repeat(40)]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${fileOf({ ...good, refs: ['refs/heads/other'] })}`]);
    expect(reasonFor(env, tomb)).toBe('a symbolic link where a lock folder is expected');
    expect(readdirSync(victim).sort()).toEqual(before);
    expect(readFileSync(join(victim, 'secret'), 'utf8')).toBe(SECRET);
  });
});
