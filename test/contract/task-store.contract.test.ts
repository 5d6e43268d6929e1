import { describe, expect, it } from 'vitest';
import { decodeTask, taskKey, uriKey, type Task } from '../../src/task/task.js';
import type { TaskStore } from '../../src/store/task-store.js';
import { storeEnvs, type StoreEnv } from './support/store-envs.js';
import { WAITING, entryOf, folderOf, listedSamples, waitingFiles, waitingRel } from './support/waiting-layout.js';

const RUNNING = 'ref-updates/running';
const LOCK = 'lock-1';
const URI = 'ssh://replica.example.com/project.git';
const KEY = uriKey(URI);

function update(ref = 'refs/heads/main', uri = URI, remote = 'mirror'): Task {
  return { project: 'project', refs: [ref], uri, remote };
}

/** Everything task-shaped left in the store: an empty store means the update is done. */
function leftovers(env: StoreEnv): string[] {
  const lockFolders = env.list(RUNNING);
  return [
    ...waitingFiles(env).map((name) => `waiting/${name}`),
    ...lockFolders.flatMap((lock) => env.list(`${RUNNING}/${lock}`).map((name) => `running/${lock}/${name}`)),
    ...env.list('ref-updates/building').map((name) => `building/${name}`),
  ];
}

/** The lock component creates the lock folder; here the test plays that part. */
function holdLock(env: StoreEnv, lockName = LOCK): string {
  env.mkdir(`${RUNNING}/${lockName}`);
  return lockName;
}

/** The names of claimed tasks, as a claim or reset returns them. */
const names = (tasks: ReadonlyArray<{ readonly name: string }>): string[] => tasks.map((task) => task.name);

describe.each(storeEnvs())('task store contract, multi-primary (%s)', (_, makeEnv) => {
  const twoNodes = (): { env: StoreEnv; a: TaskStore; b: TaskStore } => {
    const env = makeEnv();
    return { env, a: env.store('node-a'), b: env.store('node-b') };
  };

  it('keeps one file with the first mtime when both nodes create the same task', async () => {
    const { env, a, b } = twoNodes();
    const first = await a.create(update());
    expect(first.created).toBe(true);
    const path = waitingRel(update());
    const past = Date.UTC(2020, 5, 1);
    env.setMtime(path, past);
    const content = env.read(path);

    const second = await b.create(update());

    expect(second).toEqual({ key: first.key, created: false });
    expect(waitingFiles(env)).toEqual([`${KEY}/${first.key}.json`]);
    expect(env.mtime(path)).toBe(past);
    expect(env.read(path)).toBe(content);
    expect(env.list('ref-updates/building')).toEqual([]);
  });

  it('lets another node claim and finish a task, leaving the store empty', async () => {
    const { env, a, b } = twoNodes();
    const { key } = await a.create(update());
    holdLock(env);
    expect(names(await b.claim(LOCK, KEY))).toEqual([`${key}.json`]);
    expect((await b.listClaimed(LOCK)).map((t) => t.task)).toEqual([decodeTask(env.read(`${RUNNING}/${LOCK}/${key}.json`))]);
    expect(await b.finish(LOCK, [`${key}.json`])).toEqual([`${key}.json`]);
    expect(leftovers(env)).toEqual([]);
  });

  it('lets another node complete a task the first node claimed and reset', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    holdLock(env);
    expect(await a.reset(LOCK, await a.claim(LOCK, KEY))).toEqual([name]);
    expect(await listedSamples(b)).toEqual([name]);
    expect(names(await b.claim(LOCK, KEY))).toEqual([name]);
    await b.finish(LOCK, [name]);
    expect(leftovers(env)).toEqual([]);
  });

  it('lets a task be reset by one node, reset again by another and completed by the first', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    holdLock(env);
    await a.reset(LOCK, await a.claim(LOCK, KEY));
    const claimedByB = await b.claim(LOCK, KEY);
    expect(names(claimedByB)).toEqual([name]);
    expect(await b.reset(LOCK, claimedByB)).toEqual([name]);
    expect(names(await a.claim(LOCK, KEY))).toEqual([name]);
    expect(await a.finish(LOCK, [name])).toEqual([name]);
    expect(leftovers(env)).toEqual([]);
  });

  it('lets a task be reset twice by the other node and then completed by it', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    holdLock(env);
    await a.reset(LOCK, await a.claim(LOCK, KEY));
    await b.reset(LOCK, await b.claim(LOCK, KEY));
    await b.claim(LOCK, KEY);
    await b.finish(LOCK, [name]);
    expect(leftovers(env)).toEqual([]);
  });

  it('keeps the first-enqueue mtime through claim and reset', async () => {
    const { env, a, b } = twoNodes();
    await a.create(update());
    const past = Date.UTC(2021, 0, 1);
    env.setMtime(waitingRel(update()), past);
    holdLock(env);
    const claimed = await a.claim(LOCK, KEY);
    expect(claimed.map((t) => t.mtimeMs)).toEqual([past]);
    await a.reset(LOCK, claimed);
    expect(env.mtime(waitingRel(update()))).toBe(past);
    const { folders } = await b.listWaiting();
    expect(folders.map((f) => [f.oldestMtimeMs, f.sample.mtimeMs])).toEqual([[past, past]]);
  });

  it('does not perform duplicate work: the second claim of the same task gets nothing', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    await b.create(update());
    holdLock(env, 'lock-a');
    holdLock(env, 'lock-b');
    expect(names(await a.claim('lock-a', KEY))).toEqual([name]);
    expect(await b.claim('lock-b', KEY)).toEqual([]);
    expect(leftovers(env)).toEqual([`running/lock-a/${name}`]);
  });

  it("makes a node's late finish or reset of a task another node already moved a harmless no-op", async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    holdLock(env, 'lock-b');
    const claimedByB = await b.claim('lock-b', KEY);
    // Node A took the lock over and put the task back in the queue, as it found it there.
    expect(await a.reset('lock-b', await a.listClaimed('lock-b'))).toEqual([name]);

    await expect(b.finish('lock-b', [name])).resolves.toEqual([]);
    await expect(b.reset('lock-b', claimedByB)).resolves.toEqual([]);
    expect(await listedSamples(a)).toEqual([name]);

    holdLock(env, 'lock-a');
    await a.claim('lock-a', KEY);
    await a.finish('lock-a', [name]);
    await expect(b.finish('lock-b', [name])).resolves.toEqual([]);
    expect(leftovers(env)).toEqual([]);
  });

  it('lets the same key be used again after the task was completed', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    holdLock(env);
    await a.claim(LOCK, KEY);
    await a.finish(LOCK, [name]);
    expect(leftovers(env)).toEqual([]);

    expect(await b.create(update())).toEqual({ key: name.slice(0, 40), created: true });
    expect(names(await b.claim(LOCK, KEY))).toEqual([name]);
    await b.finish(LOCK, [name]);
    expect(leftovers(env)).toEqual([]);
  });

  it('keeps a task created while the same key is claimed as a separate waiting file', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    holdLock(env);
    await a.claim(LOCK, KEY);

    expect((await b.create(update())).created).toBe(true);
    expect(leftovers(env).sort()).toEqual([`running/${LOCK}/${name}`, `waiting/${KEY}/${name}`]);

    await a.finish(LOCK, [name]);
    expect(await listedSamples(b)).toEqual([name]);
  });

  it('sees the same state from a second store instance on the same root', async () => {
    const { env, a } = twoNodes();
    await a.createMany([update('refs/heads/a'), update('refs/heads/b')]);
    env.setMtime(waitingRel(update('refs/heads/b')), Date.UTC(2024, 0, 1));
    const again = env.store('node-a');
    const { folders } = await again.listWaiting();
    // One folder for the URI: its oldest task speaks for it, and both are counted.
    expect(folders.map((f) => [f.folder, f.sample.task.refs[0], f.taskCount])).toEqual([[KEY, 'refs/heads/b', 2]]);
    expect((await again.listWaitingNames()).sort()).toEqual([update('refs/heads/a'), update('refs/heads/b')].map((t) => `${taskKey(t)}.json`).sort());
  });

  it('drops tasks from the listing once another node took them, and lists them again when they return', async () => {
    const { env, a, b } = twoNodes();
    const name = `${(await a.create(update())).key}.json`;
    expect(await listedSamples(a)).toEqual([name]);
    holdLock(env);
    const claimed = await b.claim(LOCK, KEY);
    expect(await listedSamples(a)).toEqual([]);
    await b.reset(LOCK, claimed);
    expect(await listedSamples(a)).toEqual([name]);
    expect(await a.listWaitingNames()).toEqual([name]);
  });
});

describe.each(storeEnvs())('task store contract, illegal sequences never throw (%s)', (_, makeEnv) => {
  const name = `${taskKey(update())}.json`;

  it('finishing a task that was never created is a no-op', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    holdLock(env);
    await expect(store.finish(LOCK, [name])).resolves.toEqual([]);
    await expect(store.finish('no-such-lock', [name])).resolves.toEqual([]);
  });

  it('finishing twice, resetting twice, resetting an unclaimed task and claiming a missing one are no-ops', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(update());
    holdLock(env);
    await expect(store.reset(LOCK, [entryOf(update())])).resolves.toEqual([]);
    const claimed = await store.claim(LOCK, KEY);
    expect(names(claimed)).toEqual([name]);
    expect(await store.reset(LOCK, claimed)).toEqual([name]);
    await expect(store.reset(LOCK, claimed)).resolves.toEqual([]);
    await store.claim(LOCK, KEY);
    expect(await store.finish(LOCK, [name])).toEqual([name]);
    await expect(store.finish(LOCK, [name])).resolves.toEqual([]);
    await expect(store.claim(LOCK, KEY)).resolves.toEqual([]);
    await expect(store.fail(LOCK, [name], { reason: 'late' })).resolves.toEqual([]);
    expect(leftovers(env)).toEqual([]);
  });

  it('claiming into a lock folder that no longer exists claims nothing and leaves the task waiting', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.create(update());
    expect(await store.claim('released-lock', KEY)).toEqual([]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${name}`]);
  });
});

describe.each(storeEnvs())('task store contract, keys and content (%s)', (_, makeEnv) => {
  it('round-trips URIs with spaces, "=" and quotes', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const odd = update('refs/heads/main', `ssh://host/path with spaces/a=b/"quoted"/it's.git`, 'remote "x"');
    await store.create(odd);
    const [listed] = (await env.store('node-b').listWaiting()).folders;
    expect(listed?.folder).toBe(folderOf(odd));
    expect(listed?.sample.task).toEqual(odd);
    expect(listed?.sample.key).toBe(taskKey(odd));
  });

  it('gives 2 remotes x 2 URLs four distinct task files', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const tasks = ['r1', 'r2'].flatMap((remote) => ['ssh://one/p.git', 'https://two/p.git'].map((uri) => update('refs/heads/main', uri, remote)));
    const results = await store.createMany(tasks);
    expect(results.every((r) => r.created)).toBe(true);
    expect(new Set(results.map((r) => r.key)).size).toBe(4);
    expect(waitingFiles(env)).toHaveLength(4);
    // A folder per URI, whatever the remote: both remotes' tasks of a URI go in one push slot.
    expect(env.list(WAITING)).toEqual([uriKey('ssh://one/p.git'), uriKey('https://two/p.git')].sort());
  });

  it('treats the same refs in a different order as the same task', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const one = { ...update(), refs: ['refs/heads/b', 'refs/heads/a'] };
    const two = { ...update(), refs: ['refs/heads/a', 'refs/heads/b', 'refs/heads/a'] };
    expect(await store.createMany([one, two])).toEqual([
      { key: taskKey(one), created: true },
      { key: taskKey(one), created: false },
    ]);
    expect(waitingFiles(env)).toEqual([`${KEY}/${taskKey(one)}.json`]);
  });

  it('publishes a backdated task with its mtime already set, and leaves a queued one as it was', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    const listedBefore = await store.listWaiting(); // a node that lists (and learns) before and after
    expect(listedBefore.folders).toEqual([]);
    await store.create(update('refs/heads/queued'));
    const queuedMtime = (await store.listWaiting()).folders[0]!.oldestMtimeMs;
    expect(env.mtime(waitingRel(update('refs/heads/queued')))).toBe(queuedMtime);
    const at = new Date(Math.floor(queuedMtime / 1000) * 1000 - 3_600_000);
    const results = await store.createMany([update('refs/heads/new'), update('refs/heads/queued')], { mtimeOf: () => at });
    expect(results.map((r) => r.created)).toEqual([true, false]);
    expect(env.mtime(waitingRel(update('refs/heads/new')))).toBe(at.getTime());
    expect(env.mtime(waitingRel(update('refs/heads/queued')))).toBe(queuedMtime);
    // A node that learns the folder now sees the backdated task as its oldest, read with that mtime.
    const [folder] = (await env.store('node-b').listWaiting()).folders;
    expect([folder?.sample.key, folder?.oldestMtimeMs, folder?.taskCount]).toEqual([results[0]!.key, at.getTime(), 2]);
    expect(env.list('ref-updates/building')).toEqual([]);
  });
  it('writes the documented one-line JSON format', async () => {
    const env = makeEnv();
    const { key } = await env.store('node-a').create(update());
    expect(env.read(`${WAITING}/${KEY}/${key}.json`)).toBe(
      '{"version":1,"project":"project","refs":["refs/heads/main"],"uri":"ssh://replica.example.com/project.git","remote":"mirror"}\n',
    );
  });

  it('reads task files written by Gerrit (unversioned, legacy single ref)', async () => {
    const env = makeEnv();
    const store = env.store('node-a');
    await store.listWaiting(); // creates the folders
    const gerrit = 'a'.repeat(40);
    const legacy = 'b'.repeat(40);
    const folder = `${WAITING}/${uriKey('ssh://h/p.git')}`;
    env.mkdir(folder);
    env.write(`${folder}/${gerrit}.json`, '{"project":"p","refs":["refs/heads/x"],"uri":"ssh://h/p.git","remote":"m"}\n');
    env.write(`${folder}/${legacy}.json`, '{"project":"p","ref":"refs/heads/y","uri":"ssh://h/p.git","remote":"m"}\n');
    env.setMtime(`${folder}/${gerrit}.json`, Date.UTC(2024, 0, 1));
    expect((await store.listWaiting()).folders.map((f) => [f.sample.key, f.sample.task.refs, f.taskCount])).toEqual([[gerrit, ['refs/heads/x'], 2]]);
    holdLock(env);
    const claimed = (await store.claim(LOCK, uriKey('ssh://h/p.git'))).sort((x, y) => x.name.localeCompare(y.name));
    expect(claimed.map((t) => [t.key, t.task.refs])).toEqual([
      [gerrit, ['refs/heads/x']],
      [legacy, ['refs/heads/y']],
    ]);
  });
});
