import { describe, expect, it } from 'vitest';
import { groupByUri, type UntrustedTask, type UriGroup } from '../../../src/schedule/uri-groups.js';
import type { WaitingTask } from '../../../src/store/store-types.js';
import { FULL_SYNC_REF } from '../../../src/task/task.js';
import { configOf } from './scheduler-harness.js';

const config = configOf(['remote.mirror.url=/dest/mirror/${name}.git', 'remote.dr.url=/dest/dr/${name}.git', 'remote.dr.projects=p*']);

/** groupByUri with the untrusted tasks it sets aside. */
function groupWaiting(
  config: Parameters<typeof groupByUri>[0],
  listing: readonly WaitingTask[],
): { groups: ReadonlyMap<string, UriGroup>; untrusted: UntrustedTask[] } {
  const untrusted: UntrustedTask[] = [];
  return { groups: groupByUri(config, listing, new WeakMap(), untrusted), untrusted };
}

/** A waiting task as the listing returns it (frozen); `remote: 'nope'` is a task no node may push. */
function waiting(index: number, project: string, remote: string, mtimeMs: number, full = false): WaitingTask {
  const uri = `/dest/${remote === 'nope' ? 'mirror' : remote}/${project}.git`;
  const task = Object.freeze({ project, refs: [full ? FULL_SYNC_REF : `refs/heads/b${index}`], uri, remote });
  return Object.freeze({ name: `t${index}.json`, key: `t${index}`, task, mtimeMs });
}

/** What a pass works from: each group's URI, remote, lane, oldest mtime and task names. */
function shape(groups: ReadonlyMap<string, UriGroup>): Array<Record<string, unknown>> {
  return [...groups.values()].map((group) => ({
    uri: group.uri,
    remote: group.remote.name,
    lane: group.lane,
    oldest: group.oldestMtimeMs,
    tasks: group.tasks.map((item) => item.name),
  }));
}

describe('grouping waiting tasks by URI', () => {
  it('gives each URI its tasks, their oldest mtime, and the live lane when any task is a ref update, in listing order', () => {
    const listing = [
      waiting(1, 'p1', 'mirror', 5),
      waiting(2, 'p2', 'mirror', 3, true),
      waiting(3, 'p1', 'mirror', 2, true),
      waiting(4, 'p2', 'mirror', 9, true),
    ];
    expect(shape(groupByUri(config, listing))).toEqual([
      { uri: '/dest/mirror/p1.git', remote: 'mirror', lane: 'live', oldest: 2, tasks: ['t1.json', 't3.json'] },
      { uri: '/dest/mirror/p2.git', remote: 'mirror', lane: 'bulk', oldest: 3, tasks: ['t2.json', 't4.json'] },
    ]);
  });
});

describe('task files no node may push', () => {
  it('refuses a task whose ref is longer than maxRefNameBytes, quoting only a prefix of it', () => {
    const long = `refs/heads/${'z'.repeat(5000)}`;
    const item = Object.freeze({
      name: 'long.json',
      key: 'long',
      task: Object.freeze({ project: 'p1', refs: ['refs/heads/ok', long], uri: '/dest/mirror/p1.git', remote: 'mirror' }),
      mtimeMs: 1,
    });
    const grouping = groupWaiting(config, [item, waiting(2, 'p1', 'mirror', 2)]);
    expect(grouping.untrusted.map((entry) => [entry.item.name, entry.reason])).toEqual([
      [
        'long.json',
        `invalid ref name "refs/heads/${'z'.repeat(53)}"… (5011 characters): is 5011 bytes long, over the limit of 4096 bytes (replication.maxRefNameBytes)`,
      ],
    ]);
    expect([...grouping.groups.values()].map((group) => group.tasks.map((task) => task.name))).toEqual([['t2.json']]);

    const roomier = configOf(['replication.maxRefNameBytes=6000', 'remote.mirror.url=/dest/mirror/${name}.git']);
    expect(groupWaiting(roomier, [item]).untrusted).toEqual([]);
  });

  it('quotes at most a prefix and the length of a megabyte-long project, remote or uri, with credentials redacted first', () => {
    const huge = 'x'.repeat(1024 * 1024);
    const reasonOf = (task: { project: string; refs: string[]; uri: string; remote: string }): string => {
      const item = Object.freeze({ name: 'big.json', key: 'big', task: Object.freeze(task), mtimeMs: 1 });
      return groupWaiting(config, [item]).untrusted[0]!.reason;
    };
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
