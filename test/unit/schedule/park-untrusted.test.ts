import { describe, expect, it } from 'vitest';
import { parkUntrusted, refusalGraceMs, sortClaimed, untrustedByUri } from '../../../src/schedule/park-untrusted.js';
import { groupByUri, type UntrustedFolder } from '../../../src/schedule/uri-groups.js';
import type { WaitingTask } from '../../../src/store/task-store.js';
import { encodeTask, FULL_SYNC_REF, taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { configOf, harness, waitingFolder, type Harness } from './scheduler-harness.js';

// Grace: lockStale + 2 × (distributionInterval + randomDelay) = 30 s + 2 × 3 s = 36 s.
const lines = ['replication.lockStale=30s', 'replication.distributionInterval=1s', 'replication.randomDelay=2s', 'remote.mirror.url=/dest/mirror/${name}.git'];
const config = configOf(lines);
const GRACE = 36_000;
const P = '/dest/mirror/p.git';
const NOW = 1_000_000;

const good: Task = { project: 'p', refs: ['refs/heads/main'], uri: P, remote: 'mirror' };
const badRef: Task = { project: 'p', refs: ['refs/heads/../x'], uri: P, remote: 'mirror' };
const unknownRemote: Task = { project: 'p', refs: ['refs/heads/main'], uri: P, remote: 'unknown' };
const ofAnotherUri: Task = { project: 'q', refs: ['refs/heads/main'], uri: '/dest/mirror/q.git', remote: 'mirror' };

function claimed(task: Task, mtimeMs: number, name = taskKey(task)): WaitingTask {
  return Object.freeze({ name: `${name}.json`, key: name, task, mtimeMs });
}

const names = (tasks: readonly WaitingTask[]): string[] => tasks.map((item) => item.name);

describe('refusalGraceMs', () => {
  it('is lockStale plus two passes of every node, so a config change can reach them all first', () => {
    expect(refusalGraceMs(config)).toBe(GRACE);
  });
});

describe('sortClaimed: every task a claim took is checked on its own', () => {
  it('pushes what a remote may push, parks refused tasks past their grace by reason, and puts younger refused ones back', () => {
    const pushed = claimed(good, NOW - 10 * GRACE);
    const parkedA = claimed(badRef, NOW - GRACE);
    const parkedB = claimed(unknownRemote, NOW - GRACE - 1);
    const parkedC = claimed({ ...unknownRemote, refs: ['refs/heads/dev'] }, NOW - 2 * GRACE);
    const young = claimed({ ...badRef, refs: ['refs/heads/../y'] }, NOW - GRACE + 1);

    const sorted = sortClaimed(config, uriKey(P), [pushed, parkedA, young, parkedB, parkedC], 0, NOW);

    expect(names(sorted.push)).toEqual(names([pushed]));
    expect(names(sorted.putBack)).toEqual(names([young]));
    expect([...sorted.park].map(([reason, tasks]) => [reason, names(tasks)])).toEqual([
      ['invalid ref name "refs/heads/../x": contains ".."', names([parkedA])],
      [`remote "unknown" is not configured in ${config.file}`, names([parkedB, parkedC])],
    ]);
  });

  it('refuses a task of another URI found among the claimed ones, however valid it is for its own URI', () => {
    const stray = claimed(ofAnotherUri, NOW - GRACE);
    const strayYoung = claimed({ ...ofAnotherUri, refs: ['refs/heads/dev'] }, NOW);

    const sorted = sortClaimed(config, uriKey(P), [stray, strayYoung], 0, NOW);

    expect(sorted.push).toEqual([]);
    expect(names(sorted.putBack)).toEqual(names([strayYoung]));
    expect([...sorted.park].map(([reason, tasks]) => [reason, names(tasks)])).toEqual([
      ['a task for "/dest/mirror/q.git" in the waiting folder of another URI', names([stray])],
    ]);
    // Claimed for its own URI, it is pushed.
    expect(names(sortClaimed(config, uriKey(ofAnotherUri.uri), [stray], 0, NOW).push)).toEqual(names([stray]));
  });

  it('measures a task’s age on the store clock: mtime minus the offset (store clock minus ours)', () => {
    // Stamped GRACE - 5 s ago by a store clock that runs 5 s ahead of ours: written GRACE ago.
    const item = claimed(badRef, NOW - GRACE + 5_000);
    expect(sortClaimed(config, uriKey(P), [item], 5_000, NOW).park.size).toBe(1);
    expect(sortClaimed(config, uriKey(P), [item], 4_999, NOW).putBack).toEqual([item]);
    expect(sortClaimed(config, uriKey(P), [item], 0, NOW).putBack).toEqual([item]);
  });
});

describe('untrustedByUri: URIs whose learned folder is refused', () => {
  /** groupByUri's refused folders for a listing. */
  function refused(...folders: ReturnType<typeof waitingFolder>[]): UntrustedFolder[] {
    const untrusted: UntrustedFolder[] = [];
    groupByUri(config, folders, new WeakMap(), untrusted);
    return untrusted;
  }

  it('lists each URI once, due when any of its refused folders waited out the grace', () => {
    const youngLive = waitingFolder(badRef, { oldestMtimeMs: NOW - GRACE + 1 });
    const oldBulk = waitingFolder({ ...unknownRemote, refs: [FULL_SYNC_REF] }, { oldestMtimeMs: NOW - GRACE });
    const q = '/dest/mirror/q.git';
    const youngQ = waitingFolder({ ...badRef, project: 'q', uri: q }, { oldestMtimeMs: NOW });

    const byUri = untrustedByUri(refused(youngLive, oldBulk, youngQ), config, 0, NOW);

    expect(byUri).toEqual(
      new Map([
        [uriKey(P), { uri: P, due: true }],
        [uriKey(q), { uri: q, due: false }],
      ]),
    );
    // In either order.
    expect(untrustedByUri(refused(oldBulk, youngLive), config, 0, NOW).get(uriKey(P))).toEqual({ uri: P, due: true });
    expect(untrustedByUri(refused(youngLive), config, 0, NOW).get(uriKey(P))).toEqual({ uri: P, due: false });
  });

  it('takes the folder’s oldest mtime on the store clock', () => {
    const folder = waitingFolder(badRef, { oldestMtimeMs: NOW - GRACE });
    expect(untrustedByUri(refused(folder), config, 0, NOW).get(uriKey(P))?.due).toBe(true);
    // The store's clock runs 1 ms behind ours: its stamp is 1 ms older than it looks.
    expect(untrustedByUri(refused(folder), config, -1, NOW).get(uriKey(P))?.due).toBe(false);
    expect(untrustedByUri(refused(folder), config, -1, NOW + 1).get(uriKey(P))?.due).toBe(true);
  });

  it('is empty when no folder is refused', () => {
    expect(untrustedByUri(refused(waitingFolder(good, { oldestMtimeMs: 0 })), config, 0, NOW).size).toBe(0);
  });
});

describe('parkUntrusted: a URI whose folder was refused, under its lock', () => {
  /** Writes a task file into p's live folder as a person or a tool could, dated `mtimeMs`. */
  function forge(h: Harness, task: Task, mtimeMs: number): WaitingTask {
    const key = taskKey(task);
    const path = h.store.paths.waitingFile(uriKey(P), `${key}.json`);
    h.fs.writeRaw(path, encodeTask(task));
    h.fs.setMtime(path, mtimeMs);
    return { name: `${key}.json`, key, task, mtimeMs };
  }

  it('parks the refused tasks past their grace and puts back the rest of what it claimed: younger refused ones, and tasks it may push', async () => {
    const h = harness(lines);
    await h.store.open();
    await h.fs.mkdir(h.store.paths.waitingFolder(uriKey(P)));
    const old = forge(h, badRef, h.clock.now() - GRACE);
    const young = forge(h, unknownRemote, h.clock.now() - GRACE + 1);
    await h.enqueue('p', ['refs/heads/main']);

    expect(await parkUntrusted(h.deps, uriKey(P), P, 0)).toBe(1);

    expect((await h.store.listFailed()).map((item) => [item.name, item.reason?.reason])).toEqual([
      [old.name, 'invalid ref name "refs/heads/../x": contains ".."'],
    ]);
    expect(h.waitingTasks().map((item) => item.name)).toEqual([young.name, `${taskKey(good)}.json`]);
    expect(h.locks.held.size).toBe(0);
    expect(h.fs.readdirSync(h.store.paths.running)).toEqual([]);
  });

  it('parks nothing while another node holds the URI', async () => {
    const h = harness(lines);
    await h.store.open();
    await h.fs.mkdir(h.store.paths.waitingFolder(uriKey(P)));
    forge(h, badRef, h.clock.now() - GRACE);
    h.locks.heldElsewhere.add(uriKey(P));

    expect(await parkUntrusted(h.deps, uriKey(P), P, 0)).toBe(0);

    expect(await h.store.listFailed()).toEqual([]);
    expect(h.waitingTasks()).toHaveLength(1);
  });
});
