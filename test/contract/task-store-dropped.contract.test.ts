import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DROP_FOLDER_PATTERN } from '../../src/store/dropped-tasks.js';
import { taskKey, uriKey, type Task } from '../../src/task/task.js';
import { useTempDirs } from '../support/temp-dir.js';
import { faultyFs, fsError } from './support/faulty-fs.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { waitingFiles } from './support/waiting-layout.js';

const FAILED = 'ref-updates/failed';
const DROPPED = 'ref-updates/failed/dropped';
const DAY_MS = 24 * 3_600_000;
const uri = 'ssh://replica.example.com/p.git';
const otherUri = 'ssh://other.example.com/p.git';
const task = (ref: string, to = uri): Task => ({ project: 'p', refs: [ref], uri: to, remote: 'mirror' });
const fileOf = (t: Task): string => `${taskKey(t)}.json`;
const actor = { by: 'alice@m1', via: 'cli', nodeId: 'node-a' } as const;

const tempDir = useTempDirs();

/** The drop folders under failed/dropped/, sorted. */
function dropFolders(env: StoreEnv): string[] {
  return env.list(DROPPED);
}

/** Pretends a drop folder was last changed `ageMs` before its own record says it was dropped. */
function age(env: StoreEnv, folder: string, ageMs: number): void {
  const { droppedAt } = JSON.parse(env.read(`${DROPPED}/${folder}/dropped.json`)) as { droppedAt: number };
  env.setMtime(`${DROPPED}/${folder}`, droppedAt - ageMs);
}

describe.each(storeEnvs())('task store contract, dropping failed tasks (%s)', (_, makeEnv) => {
  it('moves the matching failed tasks and their reasons into one drop folder with a record of who and when; retry and listings no longer see them', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const [a, b, c] = [task('refs/heads/a'), task('refs/heads/b'), task('refs/heads/c', otherUri)];
    for (const t of [a, b, c]) await store.parkFailed(t, { reason: 'rejected by the destination: hook declined', refs: t.refs });

    const outcome = await store.dropFailed((failed) => failed.task.uri === uri, actor);

    expect(outcome.dropped.map((failed) => failed.name).sort()).toEqual([fileOf(a), fileOf(b)].sort());
    expect(outcome.folder).toMatch(DROP_FOLDER_PATTERN);
    expect(dropFolders(env)).toEqual([outcome.folder]);
    const key = uriKey(uri);
    expect(env.list(`${DROPPED}/${outcome.folder}`)).toEqual(
      ['dropped.json', `${key}.${fileOf(a)}`, `${key}.${fileOf(a)}.reason.json`, `${key}.${fileOf(b)}`, `${key}.${fileOf(b)}.reason.json`].sort(),
    );
    const record = JSON.parse(env.read(`${DROPPED}/${outcome.folder}/dropped.json`)) as Record<string, unknown>;
    expect(Object.keys(record)).toEqual(['version', 'droppedAt', 'by', 'via', 'nodeId']);
    expect(record).toMatchObject({ version: 1, by: 'alice@m1', via: 'cli', nodeId: 'node-a' });
    expect(JSON.parse(env.read(`${DROPPED}/${outcome.folder}/${key}.${fileOf(a)}.reason.json`))).toMatchObject({
      reason: 'rejected by the destination: hook declined',
    });
    expect(JSON.parse(env.read(`${DROPPED}/${outcome.folder}/${key}.${fileOf(a)}`))).toMatchObject(a);

    // The URI's failed/ folder went with its last task; the other URI's stayed.
    expect(env.list(FAILED)).toEqual(['dropped', uriKey(otherUri)].sort());
    expect((await env.store('node-b').listFailed()).map((failed) => failed.task)).toEqual([c]);
    expect(await store.retryFailed(() => true)).toBe(1);
    expect(waitingFiles(env)).toEqual([`${uriKey(otherUri)}/${fileOf(c)}`]);
  });

  it('drops nothing and makes no folder when nothing matches', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.parkFailed(task('refs/heads/a'), { reason: 'r' });
    expect(await store.dropFailed(() => false, actor)).toEqual({ folder: undefined, dropped: [] });
    expect(env.list(FAILED)).toEqual([uriKey(uri)]);
  });

  it('drops each task once when two operators drop the same tasks at the same time', async () => {
    const env = makeEnv();
    const tasks = Array.from({ length: 6 }, (_, n) => task(`refs/heads/t${n}`));
    for (const t of tasks) await env.store('node-a').parkFailed(t, { reason: 'r' });

    const [first, second] = await Promise.all([
      env.store('node-a').dropFailed(() => true, actor),
      env.store('node-b').dropFailed(() => true, { by: 'bob@m2', via: 'http' }),
    ]);

    const names = [...first.dropped, ...second.dropped].map((failed) => failed.name).sort();
    expect(names).toEqual(tasks.map(fileOf).sort());
    const inFolders = dropFolders(env)
      .flatMap((folder) => env.list(`${DROPPED}/${folder}`))
      .filter((name) => name.endsWith('.json') && !name.endsWith('.reason.json') && name !== 'dropped.json');
    expect(inFolders).toHaveLength(6);
    // A drop that lost every race leaves no folder behind.
    expect(dropFolders(env)).toHaveLength([first, second].filter((outcome) => outcome.dropped.length > 0).length);
    expect(await env.store('node-a').listFailed()).toEqual([]);
  });

  it('sweeps drop folders older than the retention, and only those', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.parkFailed(task('refs/heads/old'), { reason: 'r' });
    const old = (await store.dropFailed(() => true, actor)).folder!;
    await store.parkFailed(task('refs/heads/new'), { reason: 'r' });
    const recent = (await store.dropFailed(() => true, actor)).folder!;
    age(env, old, 8 * DAY_MS);
    age(env, recent, 6 * DAY_MS);

    expect(await store.sweepDropped(7 * DAY_MS)).toBe(1);
    expect(dropFolders(env)).toEqual([recent]);
    expect(await store.sweepDropped(7 * DAY_MS)).toBe(0);
    expect(await env.store('node-b').sweepDropped(5 * DAY_MS)).toBe(1);
    expect(dropFolders(env)).toEqual([]);
    expect(env.list(FAILED)).toEqual(['dropped']);
  });

  it('sweeps nothing before the first drop', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.parkFailed(task('refs/heads/a'), { reason: 'r' });
    expect(await store.sweepDropped(0)).toBe(0);
    expect(env.list(FAILED)).toEqual([uriKey(uri)]);
  });

  it('leaves a drop folder this node may not change or list, and sweeps the others', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const folders: string[] = [];
    for (const ref of ['a', 'b', 'c']) {
      await store.parkFailed(task(`refs/heads/${ref}`), { reason: 'r' });
      folders.push((await store.dropFailed(() => true, actor)).folder!);
    }
    for (const folder of folders) age(env, folder, 30 * DAY_MS);
    const [readOnly, unlistable] = folders as [string, string, string];
    // A stranger's modes (0555, 0333): the tests run as root, whom modes do not stop.
    const fs = faultyFs(env.fs, {
      unlink: async (path) => {
        if (path.includes(`/${readOnly}/`)) throw fsError('EACCES', 'unlink', path);
        return env.fs.unlink(path);
      },
      readdir: async (path) => {
        if (path.endsWith(`/${unlistable}`)) throw fsError('EACCES', 'scandir', path);
        return env.fs.readdir(path);
      },
    });

    expect(await env.store('node-a', { fs }).sweepDropped(DAY_MS)).toBe(1);
    expect(dropFolders(env)).toEqual([readOnly, unlistable].sort());
    expect(env.list(`${DROPPED}/${readOnly}`)).toHaveLength(3);
    expect(env.list(`${DROPPED}/${unlistable}`)).toHaveLength(3);
  });

  it('leaves what a drop never makes: other names, a file or a symlink named like a drop folder, and a folder holding a folder', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.parkFailed(task('refs/heads/a'), { reason: 'r' });
    const dropped = (await store.dropFailed(() => true, actor)).folder!;
    env.mkdir(`${DROPPED}/${dropped}/nested`);
    env.mkdir(`${DROPPED}/keep-me`);
    env.write(`${DROPPED}/20200101T000000Z.file`, 'not a folder');
    env.setMtime(`${DROPPED}/keep-me`, 0);
    age(env, dropped, 30 * DAY_MS);

    expect(await store.sweepDropped(DAY_MS)).toBe(0);
    expect(dropFolders(env)).toEqual(['20200101T000000Z.file', dropped, 'keep-me'].sort());
    // Its files went; what refrelay never writes there keeps the folder for a person to look at.
    expect(env.list(`${DROPPED}/${dropped}`)).toEqual(['nested']);
  });
});

describe('dropping failed tasks on a real directory', () => {
  const makeEnv = storeEnvs()[0]![1];

  it('never sweeps through a symlink named like a drop folder, nor through failed/dropped as a symlink; a drop replaces that link with a real folder', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.parkFailed(task('refs/heads/a'), { reason: 'r' });
    const victim = tempDir('refrelay-victim');
    writeFileSync(join(victim, 'dropped.json'), '{}');
    env.symlink(DROPPED, victim);
    expect(await store.sweepDropped(0)).toBe(0);

    const outcome = await store.dropFailed(() => true, actor);

    expect(readdirSync(victim)).toEqual(['dropped.json']);
    expect(env.list(`${DROPPED}/${outcome.folder}`)).toHaveLength(3);
    expect(env.list('ref-updates/corrupt').some((name) => name.startsWith('dropped.'))).toBe(true);
    env.symlink(`${DROPPED}/20200101T000000Z.link`, victim);
    env.setMtime(`${DROPPED}/${outcome.folder}`, Date.now() - DAY_MS);
    expect(await store.sweepDropped(0)).toBe(1);
    expect(readFileSync(join(victim, 'dropped.json'), 'utf8')).toBe('{}');
    expect(dropFolders(env)).toEqual(['20200101T000000Z.link']);
  });
});
