import { describe, expect, it } from 'vitest';
import { groupByUri, type UntrustedFolder, type UriGroup } from '../../../src/schedule/uri-groups.js';
import type { WaitingFolder } from '../../../src/store/task-store.js';
import { FULL_SYNC_REF, uriKey, type Task } from '../../../src/task/task.js';
import { configOf, waitingFolder } from './scheduler-harness.js';

const config = configOf(['remote.mirror.url=/dest/mirror/${name}.git', 'remote.dr.url=/dest/dr/${name}.git', 'remote.dr.projects=p*']);

/** groupByUri with the refused folders it sets aside. */
function groupWaiting(
  config: Parameters<typeof groupByUri>[0],
  listing: readonly WaitingFolder[],
): { groups: ReadonlyMap<string, UriGroup>; untrusted: UntrustedFolder[] } {
  const untrusted: UntrustedFolder[] = [];
  return { groups: groupByUri(config, listing, new WeakMap(), untrusted), untrusted };
}

/** A task of `project` for `remote`'s URL; `remote: 'nope'` is a task no node may push. */
function task(index: number, project: string, remote: string, full = false): Task {
  const uri = `/dest/${remote === 'nope' ? 'mirror' : remote}/${project}.git`;
  return { project, refs: [full ? FULL_SYNC_REF : `refs/heads/b${index}`], uri, remote };
}

/** What a pass works from: each group's URI, remote, lane, oldest mtime and task count. */
function shape(groups: ReadonlyMap<string, UriGroup>): Array<Record<string, unknown>> {
  return [...groups.values()].map((group) => ({
    uri: group.uri,
    remote: group.remote.name,
    lane: group.lane,
    oldest: group.oldestMtimeMs,
    tasks: group.taskCount,
  }));
}

describe('grouping waiting folders by URI', () => {
  it('gives each URI its task count, oldest mtime, and the live lane when it has a live folder, in listing order', () => {
    const listing = [
      waitingFolder(task(1, 'p1', 'mirror'), { oldestMtimeMs: 5, taskCount: 3 }),
      waitingFolder(task(2, 'p2', 'mirror', true), { oldestMtimeMs: 3, taskCount: 2 }),
      waitingFolder(task(3, 'p1', 'mirror', true), { oldestMtimeMs: 2 }),
      waitingFolder(task(4, 'p3', 'dr', true), { oldestMtimeMs: 7 }),
    ];
    expect(shape(groupByUri(config, listing))).toEqual([
      { uri: '/dest/mirror/p1.git', remote: 'mirror', lane: 'live', oldest: 2, tasks: 4 },
      { uri: '/dest/mirror/p2.git', remote: 'mirror', lane: 'bulk', oldest: 3, tasks: 2 },
      { uri: '/dest/dr/p3.git', remote: 'dr', lane: 'bulk', oldest: 7, tasks: 1 },
    ]);
  });

  it("merges a URI's bulk folder listed first with its live folder: lane live, counts summed, the older mtime", () => {
    const bulk = waitingFolder(task(1, 'p1', 'mirror', true), { oldestMtimeMs: 10, taskCount: 4 });
    const live = waitingFolder(task(2, 'p1', 'mirror'), { oldestMtimeMs: 20, taskCount: 1 });
    expect(bulk.folder).toBe(`${uriKey('/dest/mirror/p1.git')}.bulk`);
    expect(live.folder).toBe(uriKey('/dest/mirror/p1.git'));
    const groups = groupByUri(config, [bulk, live]);
    expect(shape(groups)).toEqual([{ uri: '/dest/mirror/p1.git', remote: 'mirror', lane: 'live', oldest: 10, tasks: 5 }]);
    expect([...groups.keys()]).toEqual([uriKey('/dest/mirror/p1.git')]);
    // The folders are left as the listing gave them: the next pass groups them anew.
    expect(shape(groupByUri(config, [bulk]))).toEqual([{ uri: '/dest/mirror/p1.git', remote: 'mirror', lane: 'bulk', oldest: 10, tasks: 4 }]);
  });

  it('resolves each folder once per cache: a later pass over the same folder objects reads the cached answer', () => {
    const folder = waitingFolder(task(1, 'p1', 'mirror'), { oldestMtimeMs: 1 });
    const cache = new WeakMap();
    groupByUri(config, [folder], cache);
    expect(cache.get(folder)).toMatchObject({ name: 'mirror' });
    cache.set(folder, 'refused by an earlier config');
    const untrusted: UntrustedFolder[] = [];
    expect(groupByUri(config, [folder], cache, untrusted).size).toBe(0);
    expect(untrusted).toEqual([{ folder, reason: 'refused by an earlier config' }]);
  });
});

describe('waiting folders whose task no node may push', () => {
  it("refuses a folder whose task has a ref longer than maxRefNameBytes, quoting only a prefix of it; the URI's other folder is still grouped", () => {
    const long = `refs/heads/${'z'.repeat(5000)}`;
    const refused = waitingFolder({ project: 'p1', refs: ['refs/heads/ok', long], uri: '/dest/mirror/p1.git', remote: 'mirror' }, { oldestMtimeMs: 1 });
    const grouping = groupWaiting(config, [refused, waitingFolder(task(2, 'p1', 'mirror', true), { oldestMtimeMs: 2 })]);
    expect(grouping.untrusted.map((entry) => [entry.folder, entry.reason])).toEqual([
      [
        refused,
        `invalid ref name "refs/heads/${'z'.repeat(53)}"… (5011 characters): is 5011 bytes long, over the limit of 4096 bytes (replication.maxRefNameBytes)`,
      ],
    ]);
    expect(shape(grouping.groups)).toEqual([{ uri: '/dest/mirror/p1.git', remote: 'mirror', lane: 'bulk', oldest: 2, tasks: 1 }]);

    const roomier = configOf(['replication.maxRefNameBytes=6000', 'remote.mirror.url=/dest/mirror/${name}.git']);
    expect(groupWaiting(roomier, [refused]).untrusted).toEqual([]);
  });

  it('refuses a folder whose task names another URI than the folder, even one a remote may push', () => {
    const elsewhere = waitingFolder(task(1, 'p2', 'mirror'), { oldestMtimeMs: 1, uriKey: uriKey('/dest/mirror/p1.git') });
    const grouping = groupWaiting(config, [elsewhere]);
    expect(grouping.groups.size).toBe(0);
    expect(grouping.untrusted).toEqual([{ folder: elsewhere, reason: 'a task for "/dest/mirror/p2.git" in the waiting folder of another URI' }]);
  });

  it('quotes at most a prefix and the length of a megabyte-long project, remote or uri, with credentials redacted first', () => {
    const huge = 'x'.repeat(1024 * 1024);
    const reasonOf = (task: Task): string => groupWaiting(config, [waitingFolder(task, { oldestMtimeMs: 1 })]).untrusted[0]!.reason;
    const quoted = `"${'x'.repeat(64)}"… (1048576 characters)`;
    expect(reasonOf({ project: `../${huge}`, refs: ['refs/heads/main'], uri: '/dest/mirror/p1.git', remote: 'mirror' })).toBe(
      `invalid project name "../${'x'.repeat(61)}"… (1048579 characters): has a ".." segment`,
    );
    expect(reasonOf({ project: 'p1', refs: ['refs/heads/main'], uri: '/dest/mirror/p1.git', remote: huge })).toBe(
      `remote ${quoted} is not configured in ${config.file}`,
    );
    expect(reasonOf({ project: 'p1', refs: ['refs/heads/main'], uri: `https://u:secret@evil/${huge}`, remote: 'mirror' })).toBe(
      `uri "https://u:***@evil/${'x'.repeat(45)}"… (1048595 characters) is not a URL of remote "mirror" for project "p1"`,
    );
    expect(reasonOf({ project: huge, refs: ['refs/heads/main'], uri: '/dest/mirror/p1.git', remote: 'mirror' })).toBe(
      `uri "/dest/mirror/p1.git" is not a URL of remote "mirror" for project ${quoted}`,
    );
  });
});
