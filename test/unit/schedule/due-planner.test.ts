import { describe, expect, it } from 'vitest';
import { DueIndex } from '../../../src/schedule/due-index.js';
import { planDue, scheduleAfter, unreadChangesMayWaitMs, type DuePlan, type UriSchedule } from '../../../src/schedule/due-planner.js';
import type { Job } from '../../../src/schedule/job-table.js';
import { groupByUri, type UriGroup } from '../../../src/schedule/uri-groups.js';
import type { WaitingFolder } from '../../../src/store/task-store.js';
import { FULL_SYNC_REF } from '../../../src/task/task.js';
import { configOf, waitingFolder } from './scheduler-harness.js';

// Batching window: max(replicationDelay 10s, distributionInterval 1s) = 10 s.
const config = configOf([
  'replication.distributionInterval=1s',
  'replication.randomDelay=2s',
  'remote.mirror.url=ssh://git@mirror.example/${name}.git',
  'remote.mirror.replicationDelay=10s',
  'remote.dr.url=ssh://git@dr.example/${name}.git',
  'remote.dr.replicationDelay=10s',
]);

let counter = 0;
/** The waiting folder of `project`'s URI on `remote`, in the live lane or (full) the bulk one, its oldest task at `mtimeMs`. */
function folder(project: string, remote: string, mtimeMs: number, full = false): WaitingFolder {
  const index = counter++;
  const task = { project, refs: [full ? FULL_SYNC_REF : `refs/heads/b${index}`], uri: `ssh://git@${remote}.example/${project}.git`, remote };
  return waitingFolder(task, { oldestMtimeMs: mtimeMs });
}

/** The index of a listing's URIs under their schedules, as a pass builds it. */
function indexOf(listing: WaitingFolder[], schedules: ReadonlyMap<string, UriSchedule> = new Map()): { index: DueIndex; groups: Map<string, UriGroup> } {
  const groups = groupByUri(config, listing);
  const index = new DueIndex();
  for (const group of groups.values()) index.set(group, schedules.get(group.uriKey), config);
  return { index, groups };
}

const keyOf = (groups: ReadonlyMap<string, UriGroup>, project: string): string =>
  [...groups.values()].find((group) => group.uri.endsWith(`/${project}.git`))!.uriKey;
const projectOf = (entry: { group: UriGroup }): string => /([^/]+)\.git$/.exec(entry.group.uri)![1]!;
/** Each due group's URIs, oldest first, as the pass would start them one by one. */
function dueProjects(index: DueIndex, plan: DuePlan): string[][] {
  return plan.groups.map((group) => {
    const order: string[] = [];
    for (let oldest = index.oldest(group, plan.gate); oldest !== undefined; oldest = index.oldest(group, plan.gate)) {
      order.push(projectOf(oldest));
      index.delete(oldest.group.uriKey);
    }
    return order;
  });
}
const noJobs = new Map<string, Job>();

describe('planDue', () => {
  it('makes a URI due at its oldest mtime + the batching window + its jitter, and says when the next one is', () => {
    // a's live and bulk folders: the URI is due by the older of the two.
    const listing = [folder('a', 'mirror', 1_000), folder('a', 'mirror', 500, true), folder('b', 'mirror', 4_000)];
    const { groups } = indexOf(listing);
    const schedules = new Map<string, UriSchedule>([[keyOf(groups, 'a'), { jitterMs: 700, notBefore: 0, recheckAt: 0 }]]);
    const { index } = indexOf(listing, schedules);
    const early = planDue(index, noJobs, 11_199, 0, undefined);
    expect(early.groups).toEqual([]);
    expect(early.nextDueAt).toBe(11_200);
    expect([...index.waiting(0)].map((entry) => entry.at)).toEqual([11_200, 14_000]);
    const due = planDue(index, noJobs, 11_200, 0, undefined);
    expect(due.nextDueAt).toBe(14_000);
    expect(dueProjects(index, due)).toEqual([['a']]);
  });

  it('converts store mtimes with the clock offset, and holds a URI back until its backoff and its recheck time', () => {
    const listing = [folder('a', 'mirror', 0), folder('b', 'mirror', 0), folder('c', 'mirror', 0)];
    const { groups } = indexOf(listing);
    const schedules = new Map<string, UriSchedule>([
      [keyOf(groups, 'b'), { jitterMs: 0, notBefore: 30_000, recheckAt: 0 }],
      [keyOf(groups, 'c'), { jitterMs: 0, notBefore: 0, recheckAt: 20_000 }],
    ]);
    const { index } = indexOf(listing, schedules);
    const plan = planDue(index, noJobs, 15_000, -5_000, undefined);
    expect([...index.waiting(-5_000)].map((entry) => entry.at)).toEqual([15_000, 30_000, 20_000]);
    expect(plan.nextDueAt).toBe(20_000);
    expect(dueProjects(index, plan)).toEqual([['a']]);
    // The recheck time passed: c is due; b waits for its backoff.
    expect(dueProjects(index, planDue(index, noJobs, 20_000, -5_000, undefined))).toEqual([['c']]);
    expect(planDue(index, noJobs, 20_000, -5_000, undefined).nextDueAt).toBe(30_000);
  });

  it('leaves out the hosts whose circuit is open, and weighs the jobs of this node', () => {
    const { index, groups } = indexOf([folder('a', 'mirror', 0), folder('b', 'mirror', 0), folder('c', 'dr', 0)]);
    const running = groups.get(keyOf(groups, 'a'))!;
    index.delete(running.uriKey);
    const job = { group: running, fair: { lane: 'live', remote: 'mirror', remoteShares: 1, dueAt: 0 } } as unknown as Job;
    const plan = planDue(index, new Map([[running.uriKey, job]]), 10_000, 0, (host) => (host === 'ssh://dr.example' ? 'blocked' : 'closed'));
    expect(plan.candidates).toContain(job.fair);
    expect(plan.dueByRemote).toEqual(new Map([['mirror', 1]]));
    expect(dueProjects(index, plan)).toEqual([['b']]);
  });

  it('groups due URIs by lane and remote, oldest first, and tells whether one group alone has work', () => {
    const { index } = indexOf([folder('a', 'mirror', 100), folder('b', 'dr', 0), folder('c', 'mirror', 0, true), folder('d', 'mirror', 0)]);
    const mixed = planDue(index, noJobs, 10_100, 0, undefined);
    expect(mixed.dueByRemote).toEqual(
      new Map([
        ['mirror', 3],
        ['dr', 1],
      ]),
    );
    expect(mixed.candidates.map((candidate) => `${candidate.lane}/${candidate.remote}`).sort()).toEqual(['bulk/mirror', 'live/dr', 'live/mirror']);
    expect(mixed.soleGroupAtWork).toBe(false);
    expect(dueProjects(index, mixed).sort()).toEqual([['b'], ['c'], ['d', 'a']]);
    const sole = indexOf([folder('a', 'mirror', 0), folder('d', 'mirror', 0)]).index;
    expect(planDue(sole, noJobs, 10_000, 0, undefined).soleGroupAtWork).toBe(true);
  });
});

describe('the due index', () => {
  it('indexes a URI anew when its group or schedule changes, and forgets a deleted one', () => {
    const { index, groups } = indexOf([folder('a', 'mirror', 0), folder('b', 'mirror', 0)]);
    const a = groups.get(keyOf(groups, 'a'))!;
    expect(dueProjects(index, planDue(index, noJobs, 10_000, 0, undefined))).toEqual([['a', 'b']]);
    // a comes back with a backoff: not due before it, and the index holds it once.
    index.set(a, { jitterMs: 0, notBefore: 50_000, recheckAt: 0 }, config);
    index.set(a, { jitterMs: 0, notBefore: 40_000, recheckAt: 0 }, config);
    expect(index.size).toBe(1);
    expect(planDue(index, noJobs, 39_999, 0, undefined).groups).toEqual([]);
    expect(dueProjects(index, planDue(index, noJobs, 40_000, 0, undefined))).toEqual([['a']]);
    expect(index.size).toBe(0);
    expect(planDue(index, noJobs, 90_000, 0, undefined)).toMatchObject({ groups: [], nextDueAt: undefined });
  });

  it('names the URIs whose batch comes due by a time, not those due already, later, in backoff or preferred by another node, up to a limit', () => {
    // Due at mtime + 10 s: p0 … p99 at 10,000 … 10,099 ms.
    const listing = Array.from({ length: 100 }, (_, i) => folder(`p${i}`, 'mirror', i));
    const { index, groups } = indexOf(listing);
    const p5 = groups.get(keyOf(groups, 'p5'))!;
    index.set(p5, { jitterMs: 0, notBefore: 0, recheckAt: 0 }, config);
    index.set(groups.get(keyOf(groups, 'p7'))!, { jitterMs: 0, notBefore: 60_000, recheckAt: 0 }, config);
    // Another node is preferred for p9: this one would take it 3 s after its batch, and does not read it ahead.
    index.set(groups.get(keyOf(groups, 'p9'))!, { jitterMs: 0, notBefore: 0, recheckAt: 0 }, config, { ms: 3_000, seenAt: 0 });
    planDue(index, noJobs, 10_002, 0, undefined);
    const projects = (keys: string[]): string[] =>
      keys.map((key) => projectOf({ group: groups.get(key)! })).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));

    expect(projects(index.dueBy(10_010, 0, 100))).toEqual(['p3', 'p4', 'p5', 'p6', 'p8', 'p10']);
    // The store's clock 5 ms ahead of ours: its mtimes come due 5 ms earlier here.
    expect(projects(index.dueBy(10_010, 5, 100))).toEqual(['p3', 'p4', 'p5', 'p6', 'p8', 'p10', 'p11', 'p12', 'p13', 'p14', 'p15']);
    expect(index.dueBy(10_099, 0, 10)).toHaveLength(10);
    expect(index.dueBy(10_002, 0, 100)).toEqual([]);
  });

  it('keeps its heaps bounded while URIs are indexed again and again', () => {
    const listing = Array.from({ length: 50 }, (_, i) => folder(`p${i}`, 'mirror', i));
    const { index, groups } = indexOf(listing);
    for (let round = 0; round < 200; round++) {
      for (const group of groups.values()) index.set(group, { jitterMs: round, notBefore: 0, recheckAt: 0 }, config);
      planDue(index, noJobs, 10_000 + round, 0, undefined);
    }
    expect(index.size).toBe(50);
    expect(index.storedEntries).toBeLessThanOrEqual(2 * 50 + 1024);
    expect(dueProjects(index, planDue(index, noJobs, 20_000, 0, undefined))[0]).toHaveLength(50);
  });
});

describe('scheduleAfter', () => {
  const schedule: UriSchedule = { jitterMs: 5, notBefore: 0, recheckAt: 0 };
  const random = { next: () => 0.5 };

  it('keeps a backoff, rechecks after distributionInterval when the lock was refused, and after rescheduleDelay when pushed', () => {
    expect(scheduleAfter(schedule, { kind: 'retry', notBefore: 9_000 } as never, config, 100, 3_000, random)).toEqual({
      jitterMs: 5,
      notBefore: 9_000,
      recheckAt: 0,
    });
    expect(scheduleAfter(schedule, { kind: 'locked' }, config, 100, 3_000, random)).toEqual({ jitterMs: 5, notBefore: 0, recheckAt: 1_100 });
    expect(scheduleAfter({ ...schedule, notBefore: 50 }, { kind: 'pushed' } as never, config, 100, 3_000, random)).toEqual({
      jitterMs: 1_000,
      notBefore: 0,
      recheckAt: 3_100,
    });
    expect(schedule).toEqual({ jitterMs: 5, notBefore: 0, recheckAt: 0 });
  });
});

describe('unreadChangesMayWaitMs', () => {
  const remotes = (...delays: string[]): string[] =>
    delays.flatMap((delay, i) => [`remote.r${i}.url=ssh://git@r${i}.example/\${name}.git`, `remote.r${i}.replicationDelay=${delay}`]);

  it("is the soonest batching window of any remote less one interval: no other writer's new task is due before the pass after it", () => {
    expect(unreadChangesMayWaitMs(configOf(['replication.distributionInterval=1s', ...remotes('15s', '1m')]))).toBe(14_000);
    expect(unreadChangesMayWaitMs(configOf(['replication.distributionInterval=2s', ...remotes('30s', '5s')]))).toBe(3_000);
  });

  it('is 0 when a remote pushes within one interval, or none is configured: every listing reads a changed waiting/', () => {
    expect(unreadChangesMayWaitMs(configOf(['replication.distributionInterval=1s', ...remotes('15s', '0')]))).toBe(0);
    expect(unreadChangesMayWaitMs(configOf(['replication.distributionInterval=1s']))).toBe(0);
  });
});
