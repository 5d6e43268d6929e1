import { describe, expect, it } from 'vitest';
import { taskKey, uriKey, type Task } from '../../src/task/task.js';
import { faultyFs, fsError } from './support/faulty-fs.js';
import { storeEnvs } from './support/store-envs.js';
import { WAITING, waitingFiles, waitingRel } from './support/waiting-layout.js';

const uri = 'ssh://replica.example.com/p.git';
const otherUri = 'ssh://other.example.com/p.git';
const task = (ref: string, to = uri): Task => ({ project: 'p', refs: [ref], uri: to, remote: 'mirror' });
const fileOf = (t: Task): string => `${taskKey(t)}.json`;

describe.each(storeEnvs())('task store contract, failed tasks (%s)', (_, makeEnv) => {
  it('moves claimed tasks to failed/<uriKey>/ with their reason, and lists them', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const x = task('refs/heads/x');
    await store.create(x);
    env.mkdir('ref-updates/running/lock-1');
    await store.claim('lock-1', uriKey(uri));

    expect(await store.fail('lock-1', [fileOf(x)], { reason: 'remote rejected: hook declined', attempts: 3 })).toEqual([fileOf(x)]);

    expect(env.list('ref-updates/running/lock-1')).toEqual([]);
    expect(env.list(`ref-updates/failed/${uriKey(uri)}`)).toEqual([fileOf(x), `${fileOf(x)}.reason.json`]);
    const [failed] = await env.store('node-b').listFailed();
    expect(failed).toMatchObject({ uriKey: uriKey(uri), name: fileOf(x), task: x });
    expect(failed?.reason).toMatchObject({ reason: 'remote rejected: hook declined', attempts: 3, nodeId: 'node-a' });
    expect(failed?.reason?.at).toEqual(expect.any(Number));
  });

  it('parks a new task for just the rejected refs without touching the queue', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const rejected = task('refs/heads/protected');
    const parked = await store.parkFailed(rejected, { reason: 'non-fast-forward', refs: ['refs/heads/protected'] });
    expect(parked).toEqual({ uriKey: uriKey(uri), name: fileOf(rejected) });
    expect(env.list(WAITING)).toEqual([]);
    expect(waitingFiles(env)).toEqual([]);
    const [failed] = await store.listFailed();
    expect(failed?.task).toEqual(rejected);
    expect(failed?.reason?.refs).toEqual(['refs/heads/protected']);
  });

  it('retries only the matching failed tasks, keeping a copy queued meanwhile', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const a = task('refs/heads/a');
    const b = task('refs/heads/b');
    const c = task('refs/heads/c', otherUri);
    for (const t of [a, b, c]) await store.parkFailed(t, { reason: 'gave up' });
    await store.create(b); // queued again by a new update meanwhile
    const queuedB = env.mtime(waitingRel(b));

    expect(await store.retryFailed((f) => f.task.uri === uri)).toBe(2);

    expect(waitingFiles(env)).toEqual([fileOf(a), fileOf(b)].map((name) => `${uriKey(uri)}/${name}`).sort());
    expect(env.mtime(waitingRel(b))).toBe(queuedB);
    expect((await store.listFailed()).map((f) => f.task)).toEqual([c]);
    expect(env.list('ref-updates/failed')).toEqual([uriKey(otherUri)]);
    expect(await store.retryFailed(() => true)).toBe(1);
    expect(await store.retryFailed(() => true)).toBe(0);
  });

  it('lists a failed task whose reason file is missing (crash between the two writes)', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const x = task('refs/heads/x');
    await store.parkFailed(x, { reason: 'r' });
    env.write(`ref-updates/failed/${uriKey(uri)}/${fileOf(x)}.reason.json`, '{');
    const [failed] = await store.listFailed();
    expect(failed?.task).toEqual(x);
    expect(failed?.reason).toBeUndefined();
  });
});

describe.each(storeEnvs())('task store contract, running locks, uri state, nodes (%s)', (_, makeEnv) => {
  it('lists each lock folder with its owner record and claimed tasks, skipping stray files', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const x = task('refs/heads/x');
    const y = task('refs/heads/y', otherUri);
    await store.createMany([x, y]);
    env.mkdir('ref-updates/running/lock-x');
    env.mkdir('ref-updates/running/lock-y');
    env.write('ref-updates/running/lock-x/owner.json', '{"nodeId":"node-a","beat":1}');
    env.write('ref-updates/running/stray-file', '');
    await store.claim('lock-x', uriKey(uri));
    await store.claim('lock-y', uriKey(otherUri));

    const running = (await env.store('node-b').listRunning()).sort((p, q) => p.lockName.localeCompare(q.lockName));

    expect(running.map((lock) => [lock.lockName, lock.ownerRecord, lock.tasks.map((t) => t.task)])).toEqual([
      ['lock-x', { nodeId: 'node-a', beat: 1 }, [x]],
      ['lock-y', undefined, [y]],
    ]);
    expect(running[0]?.mtimeMs).toEqual(expect.any(Number));
  });

  it('tolerates a lock folder released while it is being listed', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listRunning();
    env.mkdir('ref-updates/running/lock-gone');
    env.mkdir('ref-updates/running/lock-kept');
    const racing = faultyFs(env.fs, {
      readdir: async (path) => {
        if (path.endsWith('lock-gone')) throw fsError('ENOENT', 'scandir', path);
        return env.fs.readdir(path);
      },
    });
    expect((await env.store('node-b', { fs: racing }).listRunning()).map((l) => l.lockName)).toEqual(['lock-kept']);
  });

  it('round-trips uri state, replaces it whole and deletes it', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const key = uriKey(uri);
    expect(await store.readUriState(key)).toBeUndefined();
    await store.writeUriState(key, { attempts: 1, notBeforeAt: 10 });
    await store.writeUriState(key, { attempts: 2, notBeforeAt: 20, lastError: 'timeout' });
    expect(await env.store('node-b').readUriState(key)).toEqual({ attempts: 2, notBeforeAt: 20, lastError: 'timeout' });
    expect(env.list('ref-updates/building')).toEqual([]);
    expect(await store.deleteUriState(key)).toBe(true);
    expect(await store.deleteUriState(key)).toBe(false);
    expect(await store.readUriState(key)).toBeUndefined();
  });

  it('lists the URI keys that have a state file, skipping dot files and other names', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    expect(await store.listUriStateKeys()).toEqual([]);
    await store.writeUriState(uriKey(uri), { attempts: 1, notBefore: 10 });
    await store.writeUriState(uriKey(otherUri), { attempts: 1, notBefore: 10 });
    env.write('uri-state/.nfs0001', '');
    env.write('uri-state/notes.txt', '');
    expect((await env.store('node-b').listUriStateKeys()).sort()).toEqual([uriKey(uri), uriKey(otherUri)].sort());
    await store.deleteUriState(uriKey(uri));
    expect(await store.listUriStateKeys()).toEqual([uriKey(otherUri)]);
  });

  it('reads every node record', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    env.write('nodes/node-a.json', '{"nodeId":"node-a"}');
    env.write('nodes/node-b.json', '{"nodeId":"node-b"}');
    const records = (await store.readNodeRecordFiles()).map((file) => file.record as { nodeId: string });
    expect(records.map((r) => r.nodeId).sort()).toEqual(['node-a', 'node-b']);
  });

  it('sweeps temps a crash left in building/, and only old ones', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    env.write('ref-updates/building/old.node-x.abc.tmp', '{');
    env.write('ref-updates/building/fresh.node-x.def.tmp', '{');
    env.setMtime('ref-updates/building/old.node-x.abc.tmp', Date.UTC(2000, 0, 1));
    expect(await store.sweepBuilding(60 * 60 * 1000)).toBe(1);
    expect(env.list('ref-updates/building')).toEqual(['fresh.node-x.def.tmp']);
  });

  it('leaves a folder named like a temp in building/ (refrelay never makes one) and sweeps the temps beside it', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    env.mkdir('ref-updates/building/odd.tmp');
    env.write('ref-updates/building/old.node-x.abc.tmp', '{');
    for (const name of ['odd.tmp', 'old.node-x.abc.tmp']) env.setMtime(`ref-updates/building/${name}`, Date.UTC(2000, 0, 1));
    expect(await store.sweepBuilding(60 * 60 * 1000)).toBe(1);
    expect(env.list('ref-updates/building')).toEqual(['odd.tmp']);
  });

  it('sweeps finished claim folders out of done/, whoever retired them, and nothing else', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    const retired = [`${'a'.repeat(40)}.node-a.1f2e3d`, `${'b'.repeat(40)}.node-b.4c5b6a`, `${'c'.repeat(40)}.node-a.778899`];
    for (const name of retired) {
      env.mkdir(`ref-updates/done/${name}`);
      env.write(`ref-updates/done/${name}/owner.json`, '{}');
      env.write(`ref-updates/done/${name}/${'d'.repeat(40)}.json`, '{}');
    }
    env.mkdir('ref-updates/done/not-a-claim-folder');
    env.mkdir(`ref-updates/done/${'e'.repeat(40)}.json`); // someone else's, shaped like a task file

    expect(await store.sweepDone(2)).toBe(2);
    expect(env.list('ref-updates/done')).toHaveLength(3);
    expect(await store.sweepDone()).toBe(1);
    expect(env.list('ref-updates/done')).toEqual([`${'e'.repeat(40)}.json`, 'not-a-claim-folder']);
    expect(await store.sweepDone()).toBe(0);
  });

  it('leaves a retired claim folder that holds a folder of its own, and sweeps the others', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    const planted = `${'a'.repeat(40)}.node-a.1f2e3d`;
    const clean = `${'b'.repeat(40)}.node-b.4c5b6a`;
    for (const name of [planted, clean]) {
      env.mkdir(`ref-updates/done/${name}`);
      env.write(`ref-updates/done/${name}/${'d'.repeat(40)}.json`, '{}');
    }
    env.mkdir(`ref-updates/done/${planted}/${'f'.repeat(40)}.json`);

    expect(await store.sweepDone()).toBe(1);
    expect(env.list('ref-updates/done')).toEqual([planted]);
    expect(env.list(`ref-updates/done/${planted}`)).toEqual([`${'f'.repeat(40)}.json`]);
  });

  it('keeps the owner record of a retired claim folder that keeps another entry: a writer still seeing it under its waiting name must know it for a claimed one', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    const kept = `${'a'.repeat(40)}.node-a.1f2e3d`;
    env.mkdir(`ref-updates/done/${kept}`);
    env.write(`ref-updates/done/${kept}/owner.json`, '{}');
    env.write(`ref-updates/done/${kept}/${'d'.repeat(40)}.json`, '{}');
    env.mkdir(`ref-updates/done/${kept}/.nfs0000000001`); // what keeps it: here a folder, which the sweep does not walk

    expect(await store.sweepDone()).toBe(0);
    expect(env.list(`ref-updates/done/${kept}`)).toEqual(['.nfs0000000001', 'owner.json']);
  });

  it('leaves a retired claim folder it may not list, and sweeps the others', async () => {
    const env = makeEnv();
    await env.store('node-a').listWaiting();
    const [denied, clean] = [`${'a'.repeat(40)}.node-a.1f2e3d`, `${'b'.repeat(40)}.node-b.4c5b6a`];
    for (const name of [denied, clean]) env.mkdir(`ref-updates/done/${name}`);
    const fs = faultyFs(env.fs, {
      readdir: async (path) => {
        if (path.endsWith(`/${denied}`)) throw fsError('EACCES', 'scandir', path);
        return env.fs.readdir(path);
      },
    });
    expect(await env.store('node-a', { fs }).sweepDone()).toBe(1);
    expect(env.list('ref-updates/done')).toEqual([denied]);
  });

  it('creates the whole layout and the store marker on first use of a store it may create', async () => {
    const env = makeEnv();
    await env.store('node-a').countCorrupt();
    expect(env.list('ref-updates')).toEqual(['building', 'corrupt', 'done', 'failed', 'running', 'waiting']);
    expect(env.list('')).toEqual(['history', 'nodes', 'ref-updates', 'refrelay-store.json', 'uri-state', 'verify']);
  });
});
