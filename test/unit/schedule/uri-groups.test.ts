import { describe, expect, it } from 'vitest';
import { groupByUri, groupWaiting, withoutTasks, type ResolutionCache, type UntrustedTask, type UriGroup } from '../../../src/schedule/uri-groups.js';
import type { WaitingTask } from '../../../src/store/store-types.js';
import { FULL_SYNC_REF } from '../../../src/task/task.js';
import { configOf } from './scheduler-harness.js';

const config = configOf(['remote.mirror.url=/dest/mirror/${name}.git', 'remote.dr.url=/dest/dr/${name}.git', 'remote.dr.projects=p*']);

/** A waiting task as the listing returns it (frozen); `remote: 'nope'` is a task no node may push. */
function waiting(index: number, project: string, remote: string, mtimeMs: number, full = false): WaitingTask {
  const uri = `/dest/${remote === 'nope' ? 'mirror' : remote}/${project}.git`;
  const task = Object.freeze({ project, refs: [full ? FULL_SYNC_REF : `refs/heads/b${index}`], uri, remote });
  return Object.freeze({ name: `t${index}.json`, key: `t${index}`, task, mtimeMs });
}

/** What a pass works from: each group's identity, remote, lane, oldest mtime and task names. */
function shape(groups: ReadonlyMap<string, UriGroup>): Array<{ key: string }> {
  return [...groups.values()].map((group) => ({ key: group.uriKey, uri: group.uri, remote: group.remote.name, lane: group.lane, oldest: group.oldestMtimeMs, tasks: group.tasks.map((item) => item.name) }));
}

const byKey = <T extends { key: string }>(rows: T[]): T[] => [...rows].sort((a, b) => a.key.localeCompare(b.key));

describe('task files no node may push', () => {
  it('refuses a task whose ref is longer than maxRefNameBytes, quoting only a prefix of it', () => {
    const long = `refs/heads/${'z'.repeat(5000)}`;
    const item = Object.freeze({ name: 'long.json', key: 'long', task: Object.freeze({ project: 'p1', refs: ['refs/heads/ok', long], uri: '/dest/mirror/p1.git', remote: 'mirror' }), mtimeMs: 1 });
    const grouping = groupWaiting(config, [item, waiting(2, 'p1', 'mirror', 2)], new WeakMap());
    expect(grouping.untrusted.map((entry) => [entry.item.name, entry.reason])).toEqual([
      ['long.json', `invalid ref name "refs/heads/${'z'.repeat(53)}"… (5011 characters): is 5011 bytes long, over the limit of 4096 bytes (replication.maxRefNameBytes)`],
    ]);
    expect([...grouping.groups.values()].map((group) => group.tasks.map((task) => task.name))).toEqual([['t2.json']]);

    const roomier = configOf(['replication.maxRefNameBytes=6000', 'remote.mirror.url=/dest/mirror/${name}.git']);
    expect(groupWaiting(roomier, [item], new WeakMap()).untrusted).toEqual([]);
  });

  it('quotes at most a prefix and the length of a megabyte-long project, remote or uri, with credentials redacted first', () => {
    const huge = 'x'.repeat(1024 * 1024);
    const reasonOf = (task: { project: string; refs: string[]; uri: string; remote: string }): string => {
      const item = Object.freeze({ name: 'big.json', key: 'big', task: Object.freeze(task), mtimeMs: 1 });
      return groupWaiting(config, [item], new WeakMap()).untrusted[0]!.reason;
    };
    const quoted = `"${'x'.repeat(64)}"… (1048576 characters)`;
    expect(reasonOf({ project: `../${huge}`, refs: ['refs/heads/main'], uri: '/dest/mirror/p1.git', remote: 'mirror' })).toBe(`invalid project name "../${'x'.repeat(61)}"… (1048579 characters): has a ".." segment`);
    expect(reasonOf({ project: 'p1', refs: ['refs/heads/main'], uri: '/dest/mirror/p1.git', remote: huge })).toBe(`remote ${quoted} is not configured in ${config.file}`);
    expect(reasonOf({ project: 'p1', refs: ['refs/heads/main'], uri: `https://u:secret@evil/${huge}`, remote: 'mirror' })).toBe(
      `uri "https://u:***@evil/${'x'.repeat(45)}"… (1048595 characters) is not a URL of remote "mirror" for project "p1"`,
    );
    expect(reasonOf({ project: huge, refs: ['refs/heads/main'], uri: '/dest/mirror/p1.git', remote: 'mirror' })).toBe(`uri "/dest/mirror/p1.git" is not a URL of remote "mirror" for project ${quoted}`);
  });
});

describe('grouping after claims', () => {
  it('equals a full regroup of what is left, claim after claim, and keeps untouched groups as they are', () => {
    // Deterministic pseudo-random listing: 400 tasks over 3 remotes (one refused), 25 projects, mixed lanes.
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const remotes = ['mirror', 'dr', 'nope'];
    const listing = Array.from({ length: 400 }, (_, i) => waiting(i, `p${next(25)}`, remotes[next(3)]!, 1000 + next(500), next(10) === 0));
    const cache: ResolutionCache = new WeakMap();
    let grouping = groupWaiting(config, listing, cache);
    let left = listing;
    expect(grouping.untrusted.length).toBeGreaterThan(0);
    for (let step = 0; step < 40; step++) {
      // A claim takes some tasks of one URI (all, or some when a peer took the others); a park takes a refused one.
      const victim = left[next(left.length)]!;
      const gone = left.filter((item) => item.task.uri === victim.task.uri && item.task.remote === victim.task.remote && next(4) !== 0).map((item) => item.name);
      if (!gone.includes(victim.name)) gone.push(victim.name);
      const before = grouping;
      grouping = withoutTasks(config, grouping, [...gone, 'never-listed.json'], cache);
      left = left.filter((item) => !gone.includes(item.name));

      const untrusted: UntrustedTask[] = [];
      expect(byKey(shape(grouping.groups))).toEqual(byKey(shape(groupByUri(config, left, new WeakMap(), untrusted))));
      expect(grouping.untrusted.map((entry) => entry.item.name).sort()).toEqual(untrusted.map((entry) => entry.item.name).sort());
      for (const [key, group] of before.groups) {
        if (group.tasks.every((item) => !gone.includes(item.name))) expect(grouping.groups.get(key)).toBe(group);
      }
      // The pass keeps the URIs in the order it first saw them.
      const order = [...before.groups.keys()];
      expect([...grouping.groups.keys()]).toEqual(order.filter((key) => grouping.groups.has(key)));
    }
  });

  it('returns the grouping itself when nothing it holds is gone', () => {
    const listing = [waiting(1, 'p1', 'mirror', 5), waiting(2, 'p2', 'mirror', 6)];
    const grouping = groupWaiting(config, listing, new WeakMap());
    expect(withoutTasks(config, grouping, [], new WeakMap())).toBe(grouping);
    expect(withoutTasks(config, grouping, ['other.json'], new WeakMap()).groups).toBe(grouping.groups);
  });

  it('drops a URI whose last task is gone and recomputes the oldest mtime and the lane of one that keeps some', () => {
    const listing = [waiting(1, 'p1', 'mirror', 5), waiting(2, 'p2', 'mirror', 3), waiting(3, 'p2', 'mirror', 9, true), waiting(4, 'p2', 'mirror', 7)];
    const grouping = groupWaiting(config, listing, new WeakMap());
    const after = withoutTasks(config, grouping, ['t1.json', 't2.json', 't4.json'], new WeakMap());
    expect(shape(after.groups)).toEqual([{ key: grouping.keyOf.get('t3.json'), uri: '/dest/mirror/p2.git', remote: 'mirror', lane: 'bulk', oldest: 9, tasks: ['t3.json'] }]);
  });
});
