import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StoreEvent } from '../../src/store/task-store.js';
import { taskKey, uriKey, type Task } from '../../src/task/task.js';
import { fixturesDir } from '../support/paths.js';
import { faultyFs, fsError } from './support/faulty-fs.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { WAITING, waitingFiles } from './support/waiting-layout.js';

const CORRUPT = 'ref-updates/corrupt';
const fixture = (name: string): string => readFileSync(join(fixturesDir, 'tasks', 'invalid', name), 'utf8');
const good: Task = { project: 'p', refs: ['refs/heads/main'], uri: 'ssh://h/p.git', remote: 'mirror' };
/** The waiting folder of `good`'s URI, relative to the store root. */
const FOLDER = `${WAITING}/${uriKey(good.uri)}`;
/** Long before any task the store writes in a test. */
const EARLIER = Date.UTC(2024, 0, 1);

/** A task-like file name that is not the hash of its content, as a damaged file would have. */
const nameFor = (i: number): string => `${i.toString(16).padStart(40, '0')}.json`;

const BAD_FILES: ReadonlyArray<readonly [label: string, content: string, reason: string]> = [
  ['an empty file', fixture('empty.json'), 'empty file'],
  ['truncated JSON', fixture('truncated.json'), 'invalid JSON (truncated or damaged)'],
  ['null', fixture('null.json'), 'expected a JSON object, got null'],
  ['a future version', fixture('future-version.json'), 'written by a newer refrelay (version 2)'],
  ['a missing project', fixture('missing-project.json'), 'missing field "project"'],
  ['a missing uri', fixture('missing-uri.json'), 'missing field "uri"'],
  ['empty refs', fixture('refs-empty.json'), 'field "refs" must be a non-empty array of strings'],
];

interface Reason {
  reason: string;
  quarantinedAt: number;
  nodeId: string;
  originalPath: string;
}

function reasons(env: StoreEnv): Map<string, Reason> {
  const found = new Map<string, Reason>();
  for (const name of env.list(CORRUPT).filter((n) => n.endsWith('.reason'))) {
    const record = JSON.parse(env.read(`${CORRUPT}/${name}`)) as Reason;
    found.set(record.originalPath.split('/').pop() ?? '', record);
  }
  return found;
}

describe.each(storeEnvs())('task store contract, corrupt files (%s)', (_, makeEnv) => {
  it('quarantines every kind of unreadable file with a reason and still lists the valid tasks', async () => {
    const env = makeEnv();
    const events: StoreEvent[] = [];
    const store = env.store('node-a', { onEvent: (event) => events.push(event) });
    const { key } = await store.create(good);
    // Older than the valid task, so learning the folder reads (and quarantines) each of them first.
    BAD_FILES.forEach(([, content], i) => {
      env.write(`${FOLDER}/${nameFor(i + 1)}`, content);
      env.setMtime(`${FOLDER}/${nameFor(i + 1)}`, EARLIER + i);
    });
    const dirName = nameFor(99);
    env.mkdir(`${FOLDER}/${dirName}`);
    env.setMtime(`${FOLDER}/${dirName}`, EARLIER - 1);
    env.write(`${FOLDER}/.nfs1234`, 'not ours');
    env.write(`${WAITING}/foo.tmp`, 'not ours either');

    const { folders } = await store.listWaiting();

    expect(folders.map((f) => [f.sample.key, f.taskCount, f.oldestMtimeMs])).toEqual([[key, 1, env.mtime(`${FOLDER}/${key}.json`)]]);
    expect(waitingFiles(env)).toEqual([`${uriKey(good.uri)}/${key}.json`, `${uriKey(good.uri)}/.nfs1234`, 'foo.tmp'].sort());
    const found = reasons(env);
    BAD_FILES.forEach(([, , reason], i) => {
      expect(found.get(nameFor(i + 1))?.reason).toContain(reason);
    });
    expect(found.get(dirName)?.reason).toBe('a directory where a file is expected');
    expect(found.get(dirName)?.nodeId).toBe('node-a');
    expect(found.get(dirName)?.originalPath).toBe(join(env.root, FOLDER, dirName));
    expect(await store.countCorrupt()).toBe(BAD_FILES.length + 1);
    expect(events.filter((e) => e.type === 'quarantined')).toHaveLength(BAD_FILES.length + 1);
  });

  it('never deletes a quarantined file: its content is kept for an operator', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    env.mkdir(FOLDER);
    env.write(`${FOLDER}/${nameFor(1)}`, fixture('truncated.json'));
    await store.listWaiting();
    const [entry] = env.list(CORRUPT).filter((name) => !name.endsWith('.reason'));
    expect(entry?.startsWith(`${nameFor(1)}.`)).toBe(true);
    expect(env.read(`${CORRUPT}/${entry}`)).toBe(fixture('truncated.json'));
    expect(reasons(env).get(nameFor(1))).toMatchObject({ reason: expect.stringContaining('invalid JSON') });
  });

  it('quarantines a corrupt file once even when two nodes find it in the same pass', async () => {
    const env = makeEnv();
    const a = env.store('node-a');
    const b = env.store('node-b');
    await a.listWaiting();
    env.mkdir(FOLDER);
    env.write(`${FOLDER}/${nameFor(1)}`, 'null');
    await Promise.all([a.listWaiting(), b.listWaiting()]);
    expect(await a.countCorrupt()).toBe(1);
    expect(env.list(CORRUPT).filter((n) => n.endsWith('.reason'))).toHaveLength(1);
  });

  it('leaves an unreadable file in place while its reason cannot be written, and moves it once there is room', async () => {
    const env = makeEnv();
    let full = true;
    const fillingFs = faultyFs(env.fs, {
      open: async (path, flags) => {
        if (full && flags === 'wx') throw fsError('ENOSPC', 'open', path);
        return env.fs.open(path, flags);
      },
    });
    const events: StoreEvent[] = [];
    const store = env.store('node-a', { fs: fillingFs, onEvent: (event) => events.push(event) });
    await env.store('setup').open();
    env.mkdir(FOLDER);
    env.write(`${FOLDER}/${nameFor(1)}`, 'null');

    expect((await store.listWaiting()).folders).toEqual([]);
    expect(waitingFiles(env)).toEqual([`${uriKey(good.uri)}/${nameFor(1)}`]);
    expect(env.list(CORRUPT)).toEqual([]);
    expect(events.map((e) => e.type)).toContain('quarantine-failed');

    full = false;
    await store.listWaiting();
    expect(waitingFiles(env)).toEqual([]);
    expect(reasons(env).get(nameFor(1))?.reason).toBe('expected a JSON object, got null');
    expect(await store.countCorrupt()).toBe(1);
  });

  it('quarantines a corrupt claimed file and ignores the owner record in the lock folder', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const { key } = await store.create(good);
    env.mkdir('ref-updates/running/lock-1');
    await store.claim('lock-1', uriKey(good.uri));
    env.write('ref-updates/running/lock-1/owner.json', '{"nodeId":"node-a"}');
    env.write(`ref-updates/running/lock-1/${nameFor(1)}`, '');

    const claimed = await store.listClaimed('lock-1');

    expect(claimed.map((t) => t.key)).toEqual([key]);
    expect(env.list('ref-updates/running/lock-1')).toEqual([`${key}.json`, 'owner.json']);
    expect(await store.countCorrupt()).toBe(1);
  });

  it('reads a damaged uri state or node record as absent instead of failing', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    const uriKey = 'c'.repeat(40);
    env.write(`uri-state/${uriKey}.json`, '{"attempts":');
    env.write('nodes/node-a.json', '{"nodeId":"node-a"}');
    env.write('nodes/node-b.json', '');
    env.write('nodes/.nfs99', '{}');
    expect(await store.readUriState(uriKey)).toBeUndefined();
    expect((await store.readNodeRecordFiles()).map((file) => file.record)).toEqual([{ nodeId: 'node-a' }]);
  });

  it('lists a task written by hand with any valid task-like name', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting();
    env.mkdir(`${WAITING}/${uriKey('u')}`);
    env.write(`${WAITING}/${uriKey('u')}/${nameFor(5)}`, '{"project":"p","ref":"refs/heads/x","uri":"u","remote":"r"}');
    const [listed] = (await store.listWaiting()).folders;
    expect(listed?.sample.key).toBe(nameFor(5).slice(0, 40));
    expect(listed?.sample.key).not.toBe(taskKey(listed!.sample.task));
  });
});
