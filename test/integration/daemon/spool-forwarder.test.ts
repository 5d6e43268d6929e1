import { mkdirSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpoolForwarder } from '../../../src/daemon/spool-forwarder.js';
import { claimedNames, claimSpool, realSpoolFiles, spoolDirFor, spoolTasks, spooledNames, type SpoolFiles } from '../../../src/intake/spool.js';
import { silentLog, type Log } from '../../../src/runtime/log.js';
import { nodeStoreFs, TaskStore, type StoreFs } from '../../../src/store/task-store.js';
import { taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { initStoreSync, storeDir } from '../../support/refrelay-node.js';
import { spooledTaskFiles, waitingTaskNames, waitingTaskPaths } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

function setUp(): { store: string; spool: string; taskStore: TaskStore; forwarder: SpoolForwarder } {
  const root = tempDir('refrelay-forward');
  const store = join(root, 'store');
  mkdirSync(store); // an empty mount point: no marker yet
  const spool = spoolDirFor(join(root, 'spool'), store);
  const taskStore = new TaskStore({ root: store, nodeId: 'node-1', ifUnmarked: 'refuse' });
  const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 0 });
  return { store, spool, taskStore, forwarder };
}

/** Where a (live) task waits in layout 2: `waiting/<uriKey>/<taskKey>.json`. */
const waitingFileOf = (store: string, task: Task): string => join(storeDir(store, 'waiting'), uriKey(task.uri), `${taskKey(task)}.json`);

const tasks = (count: number): Task[] =>
  Array.from({ length: count }, (_, i) => ({ project: `team/p${i}`, refs: ['refs/heads/main'], uri: `/dest/team/p${i}.git`, remote: 'mirror' }));

describe('forwarding the spool into the store', () => {
  it('keeps every spooled task while the store is missing, then forwards 1,000 within 5 s once it is back (4× publishing them directly, on a loaded machine), keeping their enqueue times', async () => {
    const { store, spool, forwarder } = setUp();
    const enqueuedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    const queued = tasks(1000);
    await spoolTasks(spool, store, queued, enqueuedAt);

    await expect(forwarder.tick()).rejects.toThrow(/refrelay-store\.json is missing/);
    expect(spooledTaskFiles(spool)).toHaveLength(1000);
    expect(forwarder.waiting).toBe(1000);
    expect(readdirSync(store)).toEqual([]);

    initStoreSync(store);
    // The same 1,000 tasks published straight into another store, in the same moment: a machine
    // busy with other work slows both, and the target is for a quiet one (BENCHMARKS.md).
    const baselineStore = join(tempDir('refrelay-forward-baseline'), 'store');
    initStoreSync(baselineStore);
    const baselineStartedAt = performance.now();
    await new TaskStore({ root: baselineStore, nodeId: 'node-1' }).createMany(queued);
    const baselineMs = performance.now() - baselineStartedAt;
    const startedAt = performance.now();
    expect(await forwarder.tick()).toEqual({ forwarded: 1000, quarantined: 0, skipped: 0 });
    const elapsedMs = performance.now() - startedAt;
    console.info(`spool: forwarded 1000 tasks into the store in ${Math.round(elapsedMs)} ms; publishing them directly took ${Math.round(baselineMs)} ms`);
    expect(elapsedMs).toBeLessThan(Math.max(5000, 4 * baselineMs));

    expect(waitingTaskNames(store)).toEqual(queued.map((task) => `${taskKey(task)}.json`).sort());
    for (const path of waitingTaskPaths(store).slice(0, 20)) expect(statSync(path).mtimeMs).toBe(enqueuedAt.getTime());
    expect(spooledTaskFiles(spool)).toEqual([]);
    expect(forwarder.waiting).toBe(0);
    expect(readdirSync(storeDir(store, 'building'))).toEqual([]);
  });

  it('leaves a task already queued in the store as it was (the first file and mtime stay) and still empties the spool', async () => {
    const { store, spool, taskStore, forwarder } = setUp();
    initStoreSync(store);
    const [task] = tasks(1);
    await taskStore.create(task!);
    const firstMtime = statSync(waitingFileOf(store, task!)).mtimeMs;
    await spoolTasks(spool, store, [task!], new Date(Date.now() - 3_600_000));

    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(statSync(waitingFileOf(store, task!)).mtimeMs).toBe(firstMtime);
    expect(spooledTaskFiles(spool)).toEqual([]);
  });

  it('publishes a spooled task backdated to its enqueue time on the store clock', async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 30_000 });
    const enqueuedAt = new Date(1_700_000_000_000);
    const [task] = tasks(1);
    await spoolTasks(spool, store, [task!], enqueuedAt);
    await forwarder.tick();
    expect(statSync(waitingFileOf(store, task!)).mtimeMs).toBe(enqueuedAt.getTime() + 30_000);
  });

  it('claims a spool file before publishing it, so an update spooled again just before the claim is removed is a new file, forwarded at the next pass', async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const [task] = tasks(1);
    await spoolTasks(spool, store, [task!], new Date(Date.now() - 60_000));
    // Between the forwarder's last look at the file and its removal, a node pushes and finishes
    // the task, and a new update of the same refs finds the store away: enqueue spools it again.
    let raced = false;
    const files: SpoolFiles = {
      ...realSpoolFiles,
      unlink: async (path) => {
        if (!raced) {
          raced = true;
          rmSync(waitingFileOf(store, task!));
          await spoolTasks(spool, store, [task!], new Date());
        }
        await realSpoolFiles.unlink(path);
      },
    };
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 0, files });

    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(raced).toBe(true);
    expect(waitingTaskNames(store)).toEqual([]);
    expect(await spooledNames(spool)).toEqual([`${taskKey(task!)}.json`]);
    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([`${taskKey(task!)}.json`]);
    expect(spooledTaskFiles(spool)).toEqual([]);
  });

  it('forwards and removes the claims a forwarder left in forwarding/ when it died, counting them as waiting until then', async () => {
    const { store, spool, forwarder } = setUp();
    const queued = tasks(3);
    await spoolTasks(spool, store, queued, new Date(Date.now() - 60_000));
    // A forwarder that claimed the files and died before the store took them.
    expect((await claimSpool(spool)).tasks).toHaveLength(3);
    expect(await spooledNames(spool)).toEqual([]);
    expect(await claimedNames(spool)).toHaveLength(3);

    await expect(forwarder.tick()).rejects.toThrow(/refrelay-store\.json is missing/);
    expect(forwarder.waiting).toBe(3);
    initStoreSync(store);
    expect(await forwarder.tick()).toEqual({ forwarded: 3, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual(queued.map((task) => `${taskKey(task)}.json`).sort());
    expect(readdirSync(join(spool, 'forwarding'))).toEqual([]);
  });

  it('forwards a spooled task whose file cannot be removed once, not again after it was pushed and finished, and says so in problem() until the file changes', async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const warnings: string[] = [];
    const log: Log = { ...silentLog, warn: (_fields, message) => void warnings.push(message ?? '') };
    // A spool folder the daemon's user may not change refuses the claim and the unlink; as root
    // no folder mode does, so the refusals are injected. The file is read where enqueue put it.
    const refused = (): Promise<never> => Promise.reject(Object.assign(new Error('EPERM: operation not permitted'), { code: 'EPERM' }));
    const files: SpoolFiles = { ...realSpoolFiles, rename: refused, unlink: refused };
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log, storeClockOffsetMs: () => 0, files });
    const [task] = tasks(1);
    await spoolTasks(spool, store, [task!], new Date(Date.now() - 60_000));

    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([`${taskKey(task!)}.json`]);
    // A node pushes and finishes it: it leaves waiting/.
    rmSync(waitingFileOf(store, task!));

    for (let pass = 0; pass < 3; pass++) expect(await forwarder.tick()).toEqual({ forwarded: 0, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([]);
    expect(forwarder.waiting).toBe(0);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toBe('spool files are forwarded where enqueue put them, not claimed first');
    expect(warnings[1]).toMatch(/could not remove its spool file.*write permission on the spool folder/);
    expect(forwarder.problem()).toMatch(
      /^1 spool file\(s\) in .* were forwarded but could not be removed \(EPERM\): give this daemon's user write permission on that folder; spool files in .* could not be claimed before forwarding \(a move into forwarding\/ failed with EPERM\)/,
    );

    // The same update enqueued again while the store was away is a new update: forwarded again.
    await spoolTasks(spool, store, [task!], new Date());
    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([`${taskKey(task!)}.json`]);

    // Once the files are gone so is what was said of them; that claims are refused is said until one is made.
    rmSync(spool, { recursive: true });
    await forwarder.tick();
    expect(forwarder.problem()).toMatch(/^spool files in .* could not be claimed before forwarding \(a move into forwarding\/ failed with EPERM\)/);
  });

  it('without claims (forwarding/ a link), keeps a spool file that enqueue spooled again while it was read in place, forwards it again at the next pass, and says why once', async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const [task] = tasks(1);
    await spoolTasks(spool, store, [task!], new Date(Date.now() - 60_000));
    const path = join(spool, `${taskKey(task!)}.json`);
    // forwarding/ is a link, never followed: the file is read and removed in place, guarded by its ctime.
    symlinkSync(tempDir('refrelay-elsewhere'), join(spool, 'forwarding'));
    // A file's ctime moves in clock ticks of a few ms: the second spooling must fall in a later one.
    const spooledAt = statSync(path).ctimeMs;
    while (Date.now() < spooledAt + 50) await new Promise((resolve) => setTimeout(resolve, 10));
    // While the batch is published, a node pushes and finishes the task, and a new update of
    // the same refs finds the store away: enqueue spools it again (the same name: it touches the file).
    const racing = {
      createEach: async (...args: Parameters<TaskStore['createEach']>) => {
        const results = await taskStore.createEach(...args);
        rmSync(waitingFileOf(store, task!));
        await spoolTasks(spool, store, [task!], new Date());
        return results;
      },
    };
    const warnings: string[] = [];
    const log: Log = { ...silentLog, warn: (_fields, message) => void warnings.push(message ?? '') };
    const forwarder = new SpoolForwarder({ dir: spool, store: racing, log, storeClockOffsetMs: () => 0 });

    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(await spooledNames(spool)).toEqual([`${taskKey(task!)}.json`]);
    expect(warnings).toEqual(['spool files are forwarded where enqueue put them, not claimed first']);
    expect(forwarder.problem()).toMatch(/could not be claimed before forwarding \(forwarding\/ is a symbolic link, not a folder\)/);
    expect(await new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 0 }).tick()).toEqual({
      forwarded: 1,
      quarantined: 0,
      skipped: 0,
    });
    expect(waitingTaskNames(store)).toEqual([`${taskKey(task!)}.json`]);
    expect(spooledTaskFiles(spool)).toEqual([]);
  });

  it("forwards the other URIs' tasks when a plain file stands under one URI's waiting folder name: that one stays spooled, is logged once, and lands once the file is gone", async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const queued = tasks(3);
    await spoolTasks(spool, store, queued, new Date(Date.now() - 60_000));
    // The shape of a task file of Gerrit's plugin, which listings leave alone.
    const blocker = join(storeDir(store, 'waiting'), uriKey(queued[1]!.uri));
    writeFileSync(blocker, 'a task file of Gerrit\n');
    const errors: Array<[object, string]> = [];
    const log: Log = { ...silentLog, error: (fields, message) => void errors.push([fields, message ?? '']) };
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log, storeClockOffsetMs: () => 0 });
    const nameOf = (i: number): string => `${taskKey(queued[i]!)}.json`;

    expect(await forwarder.tick()).toEqual({ forwarded: 2, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([nameOf(0), nameOf(2)].sort());
    expect(spooledTaskFiles(spool)).toEqual([nameOf(1)]);
    expect(forwarder.waiting).toBe(1);
    const reason = `create task: ${blocker} is a regular file, not a folder; refusing to write through it`;
    expect(errors).toEqual([
      [
        { uri: queued[1]!.uri, tasks: 1, reason, spool },
        'the store refuses the waiting folder of spooled tasks: they stay in the spool and are tried again every pass until what stands under its name is moved away',
      ],
    ]);
    expect(forwarder.problem()).toBe(`1 spooled task(s) in ${spool} cannot be queued: ${reason}: move away what stands under that name in the store`);

    // Nodes push and finish the two that landed: they are not published again.
    for (const i of [0, 2]) rmSync(waitingFileOf(store, queued[i]!));
    for (let pass = 0; pass < 2; pass++) expect(await forwarder.tick()).toEqual({ forwarded: 0, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([]);
    expect(spooledTaskFiles(spool)).toEqual([nameOf(1)]);
    expect(errors).toHaveLength(1);

    rmSync(blocker);
    expect(await forwarder.tick()).toEqual({ forwarded: 1, quarantined: 0, skipped: 0 });
    expect(waitingTaskNames(store)).toEqual([nameOf(1)]);
    expect(spooledTaskFiles(spool)).toEqual([]);
    expect(forwarder.waiting).toBe(0);
    expect(forwarder.problem()).toBeUndefined();
  });

  it('keeps every spooled task and fails the pass when the store fails every write (EIO), then forwards them all once it works', async () => {
    const { store, spool } = setUp();
    initStoreSync(store);
    const queued = tasks(3);
    await spoolTasks(spool, store, queued, new Date(Date.now() - 60_000));
    let failing = true;
    const fs: StoreFs = {
      ...nodeStoreFs,
      link: (from, to) => (failing ? Promise.reject(Object.assign(new Error(`EIO: i/o error, link '${to}'`), { code: 'EIO' })) : nodeStoreFs.link(from, to)),
    };
    const taskStore = new TaskStore({ root: store, nodeId: 'node-1', ifUnmarked: 'refuse', fs });
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 0 });

    await expect(forwarder.tick()).rejects.toThrow(/^create task failed \(EIO\) at /);
    expect(spooledTaskFiles(spool)).toEqual(queued.map((task) => `${taskKey(task)}.json`).sort());
    expect(forwarder.waiting).toBe(3);
    expect(waitingTaskNames(store)).toEqual([]);

    failing = false;
    expect(await forwarder.tick()).toEqual({ forwarded: 3, quarantined: 0, skipped: 0 });
    expect(spooledTaskFiles(spool)).toEqual([]);
    expect(forwarder.problem()).toBeUndefined();
  });

  it('forwards the other spooled tasks when one file cannot be read (EACCES quarantined, EIO left claimed for the next pass)', async () => {
    const { store, spool, taskStore } = setUp();
    initStoreSync(store);
    const queued = tasks(5);
    await spoolTasks(spool, store, queued, new Date());
    const denied = `${taskKey(queued[1]!)}.json`;
    const failing = `${taskKey(queued[3]!)}.json`;
    const files: SpoolFiles = {
      ...realSpoolFiles,
      read: (path) => {
        if (path.includes(denied)) return Promise.reject(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }));
        if (path.includes(failing)) return Promise.reject(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
        return realSpoolFiles.read(path);
      },
    };
    const forwarder = new SpoolForwarder({ dir: spool, store: taskStore, log: silentLog, storeClockOffsetMs: () => 0, files });

    expect(await forwarder.tick()).toEqual({ forwarded: 3, quarantined: 1, skipped: 1 });
    expect(waitingTaskNames(store)).toEqual([0, 2, 4].map((i) => `${taskKey(queued[i]!)}.json`).sort());
    expect(spooledTaskFiles(spool)).toEqual([failing]);
    expect(readdirSync(join(spool, 'corrupt')).filter((name) => name.startsWith(denied))).toHaveLength(2);
    expect(forwarder.problem()).toMatch(
      /^1 unreadable spool file\(s\) in .* could not be moved to corrupt\/: check the permissions of that folder, with corrupt\/ a plain folder in it$/,
    );
  });
});
