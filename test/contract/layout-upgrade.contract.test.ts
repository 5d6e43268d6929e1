import { describe, expect, it } from 'vitest';
import { LayoutUpgradeError, sortLooseTasks, upgradeLayout } from '../../src/store/layout-upgrade.js';
import { STORE_MARKER_NAME } from '../../src/store/store-marker.js';
import { waitingFolderName } from '../../src/store/store-paths.js';
import { encodeTask, laneOfTask, taskKey, uriKey, type Task } from '../../src/task/task.js';
import { faultyFs, fsError } from './support/faulty-fs.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';

/**
 * DESIGN.md "Waiting folders (layout 2)": `refrelay init --upgrade` sorts the flat task files of a
 * layout 1 store into the folders of their URI and lane, one rename each, and replaces the marker
 * last, so an interrupted upgrade is finished by running it again.
 */
const live = (uri: string, ref: string): Task => ({ project: 'p', refs: [ref], uri, remote: 'mirror' });
const fullSync = (uri: string): Task => ({ project: 'p', refs: ['..all..'], uri, remote: 'mirror' });
const URI_A = 'ssh://h/a.git';
const URI_B = 'ssh://h/b.git';
const T0 = Date.UTC(2025, 0, 1, 12);
const MARKER_1 = '{"format":1,"storeId":"s-1","createdAt":1234}\n';
const LAYOUT_FOLDERS = ['building', 'waiting', 'running', 'failed', 'corrupt', 'done'].map((name) => `ref-updates/${name}`).concat(['uri-state', 'nodes']);

const nameOf = (task: Task): string => `${taskKey(task)}.json`;
const folderOf = (task: Task): string => waitingFolderName(uriKey(task.uri), laneOfTask(task));

/** A store as refrelay of layout 1 left it: marker format 1, tasks flat in waiting/. */
function layout1Store(env: StoreEnv, marker: string | 'unmarked' = MARKER_1): void {
  for (const folder of LAYOUT_FOLDERS) env.mkdir(folder);
  if (marker !== 'unmarked') env.write(STORE_MARKER_NAME, marker);
}

function queueFlat(env: StoreEnv, task: Task, mtimeMs: number): void {
  env.write(`ref-updates/waiting/${nameOf(task)}`, encodeTask(task));
  env.setMtime(`ref-updates/waiting/${nameOf(task)}`, mtimeMs);
}

function queueInFolder(env: StoreEnv, task: Task, mtimeMs: number): void {
  env.mkdir(`ref-updates/waiting/${folderOf(task)}`);
  env.write(`ref-updates/waiting/${folderOf(task)}/${nameOf(task)}`, encodeTask(task));
  env.setMtime(`ref-updates/waiting/${folderOf(task)}/${nameOf(task)}`, mtimeMs);
}

const inFolder = (task: Task): string => `ref-updates/waiting/${folderOf(task)}/${nameOf(task)}`;
const marker = (env: StoreEnv): unknown => JSON.parse(env.read(STORE_MARKER_NAME));

describe.each(storeEnvs())('layout upgrade (%s)', (_, makeEnv) => {
  it('moves every flat task into the folder of its URI and lane with its mtime, then marks the store layout 2 with the same id', async () => {
    const env = makeEnv();
    layout1Store(env);
    const tasks = [live(URI_A, 'refs/heads/main'), live(URI_A, 'refs/heads/dev'), fullSync(URI_A), live(URI_B, 'refs/heads/main')];
    tasks.forEach((task, i) => queueFlat(env, task, T0 + i * 1000));

    const result = await upgradeLayout(env.context('op'));

    expect(result).toEqual({ from: 1, upgraded: true, moved: 4, duplicates: 0, quarantined: 0, skipped: 0, left: [] });
    const a = uriKey(URI_A);
    expect(env.list('ref-updates/waiting')).toEqual([a, `${a}.bulk`, uriKey(URI_B)].sort());
    expect(env.list(`ref-updates/waiting/${a}`)).toEqual([nameOf(tasks[0]!), nameOf(tasks[1]!)].sort());
    expect(env.list(`ref-updates/waiting/${a}.bulk`)).toEqual([nameOf(tasks[2]!)]);
    tasks.forEach((task, i) => expect(env.mtime(inFolder(task))).toBe(T0 + i * 1000));
    expect(marker(env)).toEqual({ format: 2, storeId: 's-1', createdAt: 1234 });
    await env.store('node-a', { ifUnmarked: 'refuse' }).open();
  });

  it('keeps one copy of a task queued both flat and in its folder: the one with the older mtime', async () => {
    const env = makeEnv();
    layout1Store(env);
    const flatOlder = live(URI_A, 'refs/heads/main');
    const flatNewer = live(URI_A, 'refs/heads/dev');
    queueInFolder(env, flatOlder, T0 + 5000);
    queueFlat(env, flatOlder, T0);
    queueInFolder(env, flatNewer, T0);
    queueFlat(env, flatNewer, T0 + 5000);

    const result = await upgradeLayout(env.context('op'));

    expect(result).toMatchObject({ moved: 0, duplicates: 2, skipped: 0 });
    expect(env.list('ref-updates/waiting')).toEqual([uriKey(URI_A)]);
    expect(env.mtime(inFolder(flatOlder))).toBe(T0);
    expect(env.mtime(inFolder(flatNewer))).toBe(T0);
    expect(marker(env)).toMatchObject({ format: 2 });
  });

  it('leaves symlinks, FIFOs and names that are not task files alone, reports them, and still upgrades', async () => {
    const env = makeEnv();
    layout1Store(env);
    const task = live(URI_A, 'refs/heads/main');
    queueFlat(env, task, T0);
    const link = `${'a'.repeat(40)}.json`;
    const fifo = `${'b'.repeat(40)}.json`;
    env.symlink(`ref-updates/waiting/${link}`, '/etc/passwd');
    env.mkfifo(`ref-updates/waiting/${fifo}`);
    env.write('ref-updates/waiting/notes.txt', 'hello\n');

    const result = await upgradeLayout(env.context('op'));

    expect(result).toMatchObject({ moved: 1, duplicates: 0, quarantined: 0, skipped: 3 });
    expect([...result.left].sort((x, y) => x.name.localeCompare(y.name))).toEqual([
      { name: link, reason: 'a symbolic link', task: false },
      { name: fifo, reason: 'a FIFO', task: false },
      { name: 'notes.txt', reason: 'not a task file name', task: false },
    ]);
    expect(env.list('ref-updates/waiting')).toEqual([uriKey(URI_A), link, fifo, 'notes.txt'].sort());
    expect(marker(env)).toMatchObject({ format: 2 });
  });

  it('quarantines a flat task file that cannot be read, with its reason', async () => {
    const env = makeEnv();
    layout1Store(env);
    const bad = `${'c'.repeat(40)}.json`;
    env.write(`ref-updates/waiting/${bad}`, '{"project": tr');

    const result = await upgradeLayout(env.context('op'));

    expect(result).toMatchObject({ moved: 0, quarantined: 1, skipped: 0 });
    expect(env.list('ref-updates/waiting')).toEqual([]);
    const corrupt = env.list('ref-updates/corrupt');
    expect(corrupt).toHaveLength(2);
    const reason = corrupt.find((name) => name.endsWith('.reason'))!;
    expect(reason.startsWith(`${bad}.`)).toBe(true);
    expect(JSON.parse(env.read(`ref-updates/corrupt/${reason}`))).toMatchObject({
      reason: expect.stringMatching(/^invalid JSON \(truncated or damaged\)/),
      originalPath: `${env.root}/ref-updates/waiting/${bad}`,
    });
  });

  it('an upgrade cut short (some tasks moved, marker still layout 1) is finished by running it again', async () => {
    const env = makeEnv();
    layout1Store(env);
    const tasks = [live(URI_A, 'refs/heads/main'), fullSync(URI_A), live(URI_B, 'refs/heads/main')];
    tasks.forEach((task, i) => queueFlat(env, task, T0 + i * 1000));
    let renames = 0;
    const dying = faultyFs(env.fs, {
      rename: async (from, to) => {
        if (++renames === 2) throw fsError('EIO', 'rename', from);
        await env.fs.rename(from, to);
      },
    });

    await expect(upgradeLayout(env.context('op', { fs: dying, concurrency: 1 }))).rejects.toThrow(/sort waiting task failed \(EIO\)/);
    expect(marker(env)).toEqual({ format: 1, storeId: 's-1', createdAt: 1234 });
    expect(env.list('ref-updates/waiting').filter((name) => name.endsWith('.json'))).toHaveLength(2);
    await expect(env.store('node-a', { ifUnmarked: 'adopt-earlier' }).open()).rejects.toThrow(/has layout 1/);

    const again = await upgradeLayout(env.context('op'));

    expect(again).toMatchObject({ from: 1, upgraded: true, moved: 2, duplicates: 0 });
    tasks.forEach((task, i) => expect(env.mtime(inFolder(task))).toBe(T0 + i * 1000));
    expect(env.list('ref-updates/waiting').filter((name) => name.endsWith('.json'))).toEqual([]);
    expect(marker(env)).toEqual({ format: 2, storeId: 's-1', createdAt: 1234 });
  });

  it('keeps the store at layout 1 while a task cannot be sorted (its folder name taken, or another task under its name)', async () => {
    const env = makeEnv();
    layout1Store(env);
    const blocked = live(URI_A, 'refs/heads/main');
    const clash = live(URI_B, 'refs/heads/main');
    const other = live(URI_B, 'refs/heads/dev');
    queueFlat(env, blocked, T0);
    env.write(`ref-updates/waiting/${folderOf(blocked)}`, 'a file under a folder name\n');
    queueFlat(env, clash, T0);
    env.mkdir(`ref-updates/waiting/${folderOf(clash)}`);
    env.write(inFolder(clash), encodeTask(other)); // another task under clash's name
    queueFlat(env, other, T0);

    const error = await upgradeLayout(env.context('op')).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(LayoutUpgradeError);
    expect((error as LayoutUpgradeError).left.map((entry) => entry.reason).sort()).toEqual(
      [
        `waiting/${folderOf(blocked)} is a regular file, not a folder`,
        `waiting/${folderOf(clash)}/${nameOf(clash)} holds another task under the same name`,
      ].sort(),
    );
    expect((error as Error).message).toMatch(
      /^the store at .* stays at layout 1: 2 task files in ref-updates\/waiting\/ could not be moved into their folders: /,
    );
    expect(env.exists(inFolder(other))).toBe(true);
    expect(marker(env)).toMatchObject({ format: 1 });
  });

  it('leaves a store already at layout 2 as it is', async () => {
    const env = makeEnv();
    layout1Store(env, '{"format":2,"storeId":"s-2","createdAt":1}\n');
    const task = live(URI_A, 'refs/heads/main');
    queueInFolder(env, task, T0);

    expect(await upgradeLayout(env.context('op'))).toEqual({ from: 2, upgraded: false, moved: 0, duplicates: 0, quarantined: 0, skipped: 0, left: [] });
    expect(env.list('ref-updates/waiting')).toEqual([folderOf(task)]);
    expect(env.read(STORE_MARKER_NAME)).toBe('{"format":2,"storeId":"s-2","createdAt":1}\n');
  });

  it("sorts an earlier refrelay's unmarked store and marks it layout 2", async () => {
    const env = makeEnv();
    layout1Store(env, 'unmarked');
    const task = fullSync(URI_B);
    queueFlat(env, task, T0);

    expect(await upgradeLayout(env.context('op'))).toMatchObject({ from: 'unmarked', upgraded: true, moved: 1 });
    expect(env.mtime(inFolder(task))).toBe(T0);
    expect(marker(env)).toMatchObject({ format: 2, storeId: expect.any(String) });
  });

  it('sortLooseTasks sorts the stray flat files a tool left in a layout 2 store, and a peer that sorted one first is no error', async () => {
    const env = makeEnv();
    layout1Store(env, '{"format":2,"storeId":"s-2","createdAt":1}\n');
    const task = live(URI_A, 'refs/heads/main');
    queueFlat(env, task, T0);
    const ctx = env.context('node-a');

    const [first, second] = await Promise.all([sortLooseTasks(ctx, [nameOf(task)]), sortLooseTasks(env.context('node-b'), [nameOf(task)])]);

    expect(first.moved + second.moved + first.duplicates + second.duplicates).toBe(1);
    expect(env.list('ref-updates/waiting')).toEqual([folderOf(task)]);
    expect(env.mtime(inFolder(task))).toBe(T0);
    expect(await sortLooseTasks(ctx, [nameOf(task)])).toEqual({ moved: 0, duplicates: 0, quarantined: 0, skipped: 0, left: [] });
  });
});
