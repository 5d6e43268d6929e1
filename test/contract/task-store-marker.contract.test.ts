import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { GerritEventsDirError } from '../../src/store/gerrit-events-dir.js';
import { STORE_MARKER_NAME, StoreLayoutError, StoreMissingError } from '../../src/store/store-marker.js';
import { StorePaths, waitingFolderName } from '../../src/store/store-paths.js';
import { encodeTask, taskKey, uriKey, type Task } from '../../src/task/task.js';
import type { StoreEvent } from '../../src/store/task-store.js';
import { useTempDirs } from '../support/temp-dir.js';
import { storeEnvs } from './support/store-envs.js';

const tempDir = useTempDirs();

/**
 * DESIGN.md invariant 9: a store is made once, explicitly, and marked; a path without the marker
 * (a network filesystem that is not mounted) is never written to by accident.
 */
const task: Task = { project: 'p', refs: ['refs/heads/main'], uri: 'ssh://h/p.git', remote: 'mirror' };
const QUEUED_AT = Date.UTC(2025, 0, 1, 12);
/** The folders of a store's layout, relative to its root. */
const LAYOUT_FOLDERS = ['building', 'waiting', 'running', 'failed', 'corrupt', 'done'].map((name) => `ref-updates/${name}`).concat(['uri-state', 'nodes']);

describe.each(storeEnvs())('task store contract, store marker (%s)', (_, makeEnv) => {
  it("refuses a path without a marker and writes nothing there when told to ('refuse', 'adopt-earlier')", async () => {
    const env = makeEnv();
    env.mkdir('.'); // the empty mount point of a filesystem that is not mounted
    for (const ifUnmarked of ['refuse', 'adopt-earlier'] as const) {
      const error = await env
        .store('node-a', { ifUnmarked })
        .create(task)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StoreMissingError);
      expect((error as Error).message).toBe(
        `no refrelay store at ${env.root} (${STORE_MARKER_NAME} is missing). If the store is on a network filesystem, it may not be mounted; ` +
          'to create a new store there, run: refrelay init --config FILE',
      );
      expect(env.list('.')).toEqual([]);
    }
  });

  it("adopts an earlier refrelay's store (ref-updates/waiting/, no marker) unless told to refuse, sorting its flat tasks into their folders", async () => {
    const env = makeEnv();
    // What an earlier refrelay left: the layout without a marker, its tasks flat in waiting/ (layout 1).
    for (const folder of LAYOUT_FOLDERS) env.mkdir(folder);
    const name = `${taskKey(task)}.json`;
    env.write(`ref-updates/waiting/${name}`, encodeTask(task));
    env.setMtime(`ref-updates/waiting/${name}`, QUEUED_AT);

    await expect(env.store('cli', { ifUnmarked: 'refuse' }).open()).rejects.toThrow(/made by an earlier refrelay, without refrelay-store\.json/);
    expect(env.exists(STORE_MARKER_NAME)).toBe(false);
    const events: unknown[] = [];
    await env.store('node-a', { ifUnmarked: 'adopt-earlier', onEvent: (event) => events.push(event) }).open();
    expect(events).toEqual([{ type: 'store-marked', root: env.root, opening: 'adopted' }]);
    expect(JSON.parse(env.read(STORE_MARKER_NAME))).toMatchObject({ format: 2, storeId: expect.any(String) });
    const folder = waitingFolderName(uriKey(task.uri), 'live');
    expect(env.list('ref-updates/waiting')).toEqual([folder]);
    expect(env.mtime(`ref-updates/waiting/${folder}/${name}`)).toBe(QUEUED_AT);
    await env.store('cli', { ifUnmarked: 'refuse' }).open();
  });

  it('refuses a store of layout 1 under every policy, init included, naming the upgrade to run, and changes nothing', async () => {
    const env = makeEnv();
    for (const folder of LAYOUT_FOLDERS) env.mkdir(folder);
    env.write(STORE_MARKER_NAME, '{"format":1,"storeId":"s-1","createdAt":1}\n');
    const name = `${taskKey(task)}.json`;
    env.write(`ref-updates/waiting/${name}`, encodeTask(task));
    const message = `the store at ${env.root} has layout 1; this refrelay needs layout 2: ` + 'stop every node and run `refrelay init --upgrade --config FILE`';
    for (const ifUnmarked of ['refuse', 'adopt-earlier', 'create'] as const) {
      const error = await env
        .store('a', { ifUnmarked })
        .open()
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StoreLayoutError);
      expect((error as Error).message).toBe(message);
    }
    await expect(env.store('a').init()).rejects.toThrow(message);
    expect(env.list('ref-updates/waiting')).toEqual([name]);
    expect(env.read(STORE_MARKER_NAME)).toBe('{"format":1,"storeId":"s-1","createdAt":1}\n');
  });

  it("is never taken for Gerrit's events directory by a node that looks while a peer makes its folders", async () => {
    const layout = new StorePaths('/store').folders.map((path) => path.slice('/store/'.length));
    for (let made = 1; made <= layout.length; made++) {
      const env = makeEnv();
      env.mkdir('.');
      for (const folder of layout.slice(0, made)) env.mkdir(folder);

      await env.store('b', { ifUnmarked: 'create' }).create(task);

      expect(JSON.parse(env.read(STORE_MARKER_NAME))).toMatchObject({ format: 2 });
    }
  });

  it("refuses the events directory of Gerrit's replication plugin under every policy and writes nothing there", async () => {
    const env = makeEnv();
    for (const folder of ['.', 'ref-updates', 'ref-updates/building', 'ref-updates/running', 'ref-updates/waiting']) env.mkdir(folder);
    // Before the plugin queued anything: its bare layout is not an earlier refrelay's store.
    for (const ifUnmarked of ['refuse', 'adopt-earlier', 'create'] as const) {
      await expect(env.store('a', { ifUnmarked }).create(task)).rejects.toThrow(
        /is the events directory of Gerrit's replication plugin, not a refrelay store: its ref-updates\/ holds the plugin's building\/, running\/ and waiting\/ and nothing of refrelay's/,
      );
    }
    await expect(env.store('a').init()).rejects.toBeInstanceOf(GerritEventsDirError);
    env.write(
      'ref-updates/waiting/0123456789abcdef0123456789abcdef01234567',
      '{"project":"p","refs":["refs/heads/main"],"uri":"ssh://h/p.git","remote":"mirror"}\n',
    );
    env.write(
      'ref-updates/running/1123456789abcdef0123456789abcdef01234567',
      '{"project":"p","refs":["refs/heads/x"],"uri":"ssh://h/p.git","remote":"mirror"}\n',
    );
    await expect(env.store('a', { ifUnmarked: 'adopt-earlier' }).listWaiting()).rejects.toThrow(
      /holds 2 task files of the plugin \(1 in waiting\/, 1 in running\/\)/,
    );
    expect(env.list('.')).toEqual(['ref-updates']);
    expect(env.list('ref-updates')).toEqual(['building', 'running', 'waiting']);

    // With a marker it is a store: files named like the plugin's are anyone's to drop (config check
    // and the daemon warn about them), and one must never stop the nodes.
    env.write(STORE_MARKER_NAME, '{"format":2,"storeId":"x"}');
    expect(await env.store('a').init()).toBe('existing');
    expect((await env.store('a', { ifUnmarked: 'refuse' }).listWaiting()).folders).toEqual([]);
  });

  it('init creates the store once; a second init and every node see the same marker', async () => {
    const env = makeEnv();
    expect(await env.store('a').init()).toBe('created');
    const marker = env.read(STORE_MARKER_NAME);
    expect(await env.store('b').init()).toBe('existing');
    expect(env.read(STORE_MARKER_NAME)).toBe(marker);
    expect(env.list('.')).toEqual(['history', 'nodes', 'ref-updates', STORE_MARKER_NAME, 'uri-state', 'verify']);
    expect((await env.store('c', { ifUnmarked: 'refuse' }).create(task)).created).toBe(true);
  });

  it('makes a folder missing from a marked store again, and says which one', async () => {
    const env = makeEnv();
    await env.store('a').init();
    await env.fs.rmdir(`${env.root}/ref-updates/waiting`);
    const events: unknown[] = [];
    expect(await env.store('node-a', { ifUnmarked: 'adopt-earlier', onEvent: (event) => events.push(event) }).listWaiting()).toMatchObject({
      folders: [],
      changed: new Set(),
      unlearned: 0,
      loose: [],
    });
    expect(events).toEqual([{ type: 'folder-recreated', path: `${env.root}/ref-updates/waiting` }]);
    expect(env.list('ref-updates')).toContain('waiting');
  });

  it('refuses a store where a layout folder is a file, a FIFO or a link that leads to no folder, naming each, and changes nothing', async () => {
    const env = makeEnv();
    await env.store('a').init();
    for (const folder of ['nodes', 'history', 'ref-updates/corrupt', 'ref-updates/done']) await env.fs.rmdir(`${env.root}/${folder}`);
    env.symlink('nodes', `${env.root}/nowhere`);
    env.write('ref-updates/corrupt', 'not a folder');
    env.mkfifo('ref-updates/done');
    const events: StoreEvent[] = [];

    const error = await env
      .store('node-a', { ifUnmarked: 'adopt-earlier', onEvent: (event) => events.push(event) })
      .listWaiting()
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toBe(
      `the store at ${env.root} cannot be used: ` +
        `${env.root}/nodes is a symbolic link that does not lead to a folder: make it lead to one, or replace it with a folder; ` +
        `${env.root}/ref-updates/corrupt is a regular file, not a folder: replace it with a folder; ` +
        `${env.root}/ref-updates/done is a FIFO, not a folder: replace it with a folder`,
    );
    // history/ was missing too: not made while the store is refused.
    expect(env.list('.')).toEqual(['nodes', 'ref-updates', STORE_MARKER_NAME, 'uri-state', 'verify']);
    expect(env.list('ref-updates')).toEqual(['building', 'corrupt', 'done', 'failed', 'running', 'waiting']);
    expect(env.read('ref-updates/corrupt')).toBe('not a folder');
    expect(events).toEqual([]);
  });

  it('refuses a store whose ref-updates/ is a file, naming it', async () => {
    const env = makeEnv();
    env.mkdir('.');
    env.write(STORE_MARKER_NAME, '{"format":2,"storeId":"x"}');
    env.write('ref-updates', '');
    await expect(env.store('a').countCorrupt()).rejects.toThrow(
      new StoreError(`the store at ${env.root} cannot be used: ${env.root}/ref-updates is a regular file, not a folder: replace it with a folder`),
    );
    expect(env.list('.')).toEqual(['ref-updates', STORE_MARKER_NAME]);
  });

  it('refuses a marker that is not a plain small JSON file, or one from a newer format', async () => {
    const env = makeEnv();
    env.mkdir('.');
    env.mkfifo(STORE_MARKER_NAME);
    await expect(env.store('a', { ifUnmarked: 'refuse' }).create(task)).rejects.toThrow(/is not a refrelay store marker: a FIFO where a file is expected/);
    await env.fs.unlink(`${env.root}/${STORE_MARKER_NAME}`);
    env.write(STORE_MARKER_NAME, '{"format":3,"storeId":"x"}');
    await expect(env.store('a', { ifUnmarked: 'refuse' }).create(task)).rejects.toThrow(
      `the store at ${env.root} has format 3, made by a newer refrelay; this one reads format 2`,
    );
  });
});

describe('store marker on a real directory', () => {
  const makeEnv = storeEnvs()[0]![1];

  it('follows a layout folder that is a link to a folder: the operator placed it (done/ on another filesystem)', async () => {
    const env = makeEnv();
    await env.store('a').init();
    const elsewhere = join(tempDir('refrelay-done-elsewhere'), 'done');
    mkdirSync(elsewhere);
    await env.fs.rmdir(`${env.root}/ref-updates/done`);
    env.symlink('ref-updates/done', elsewhere);
    const events: StoreEvent[] = [];

    expect(await env.store('node-a', { ifUnmarked: 'refuse', onEvent: (event) => events.push(event) }).countCorrupt()).toBe(0);

    expect((await env.fs.lstat(`${env.root}/ref-updates/done`)).isSymbolicLink()).toBe(true);
    expect(events).toEqual([]);
  });
});
