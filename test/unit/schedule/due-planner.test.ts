import { describe, expect, it } from 'vitest';
import { planDue, scheduleAfter, type PlanInput, type UriSchedule } from '../../../src/schedule/due-planner.js';
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

function input(listing: WaitingFolder[], overrides: Partial<PlanInput> = {}): PlanInput {
  return { groups: groupByUri(config, listing), schedules: new Map(), jobs: new Map(), config, offsetMs: 0, now: 0, gate: undefined, ...overrides };
}

const keyOf = (groups: ReadonlyMap<string, UriGroup>, project: string): string =>
  [...groups.values()].find((group) => group.uri.endsWith(`/${project}.git`))!.uriKey;
const projects = (entries: ReadonlyArray<{ group: UriGroup }>): string[] => entries.map((entry) => /([^/]+)\.git$/.exec(entry.group.uri)![1]!);

describe('planDue', () => {
  it('makes a URI due at its oldest mtime + the batching window + its jitter, and says when the next one is', () => {
    // a's live and bulk folders: the URI is due by the older of the two.
    const base = input([folder('a', 'mirror', 1_000), folder('a', 'mirror', 500, true), folder('b', 'mirror', 4_000)]);
    const schedules = new Map<string, UriSchedule>([[keyOf(base.groups, 'a'), { jitterMs: 700, notBefore: 0, recheckAt: 0 }]]);
    const early = planDue({ ...base, schedules, now: 11_199 });
    expect(early.buckets).toEqual([]);
    expect(early.nextDueAt).toBe(11_200);
    expect(early.waiting.map((entry) => entry.at)).toEqual([11_200, 14_000]);
    const due = planDue({ ...base, schedules, now: 11_200 });
    expect(due.buckets.map(projects)).toEqual([['a']]);
    expect(due.nextDueAt).toBe(14_000);
  });

  it('converts store mtimes with the clock offset, and holds a URI back until its backoff and its recheck time', () => {
    const base = input([folder('a', 'mirror', 0), folder('b', 'mirror', 0), folder('c', 'mirror', 0)]);
    const schedules = new Map<string, UriSchedule>([
      [keyOf(base.groups, 'b'), { jitterMs: 0, notBefore: 30_000, recheckAt: 0 }],
      [keyOf(base.groups, 'c'), { jitterMs: 0, notBefore: 0, recheckAt: 20_000 }],
    ]);
    const plan = planDue({ ...base, schedules, offsetMs: -5_000, now: 15_000 });
    expect(plan.buckets.map(projects)).toEqual([['a']]);
    expect(plan.waiting.map((entry) => entry.at)).toEqual([15_000, 30_000, 20_000]);
    expect(plan.nextDueAt).toBe(20_000);
  });

  it('leaves out URIs this node is pushing and those of a host whose circuit is open, but lists them', () => {
    const base = input([folder('a', 'mirror', 0), folder('b', 'mirror', 0), folder('c', 'dr', 0)]);
    const running = base.groups.get(keyOf(base.groups, 'a'))!;
    const job = { group: running, fair: { lane: 'live', remote: 'mirror', remoteShares: 1, dueAt: 0 } } as unknown as Job;
    const plan = planDue({
      ...base,
      jobs: new Map([[running.uriKey, job]]),
      now: 10_000,
      gate: (host) => (host === 'ssh://dr.example' ? 'blocked' : 'closed'),
    });
    expect(plan.buckets.map(projects)).toEqual([['b']]);
    expect(projects(plan.waiting)).toEqual(['a', 'b', 'c']);
    expect(plan.candidates).toContain(job.fair);
  });

  it('groups due URIs by lane and remote, in listing order, and tells whether one group alone has work', () => {
    const mixed = planDue(input([folder('a', 'mirror', 0), folder('b', 'dr', 0), folder('c', 'mirror', 0, true), folder('d', 'mirror', 0)], { now: 10_000 }));
    expect(mixed.buckets.map(projects)).toEqual([['a', 'd'], ['b'], ['c']]);
    expect(mixed.dueByRemote).toEqual(
      new Map([
        ['mirror', 3],
        ['dr', 1],
      ]),
    );
    expect(mixed.candidates.map((candidate) => `${candidate.lane}/${candidate.remote}`)).toEqual(['live/mirror', 'live/dr', 'bulk/mirror']);
    expect(mixed.soleGroupAtWork).toBe(false);
    expect(planDue(input([folder('a', 'mirror', 0), folder('d', 'mirror', 0)], { now: 10_000 })).soleGroupAtWork).toBe(true);
  });

  it('is a function of its input: the same input gives the same plan, and the input is left as it was', () => {
    const base = input([folder('a', 'mirror', 0), folder('b', 'mirror', 5_000)], { now: 10_000 });
    const schedules = new Map<string, UriSchedule>([[keyOf(base.groups, 'a'), { jitterMs: 10, notBefore: 0, recheckAt: 0 }]]);
    const before = JSON.stringify([...schedules]);
    const first = planDue({ ...base, schedules });
    expect(planDue({ ...base, schedules })).toEqual(first);
    expect(JSON.stringify([...schedules])).toBe(before);
    expect(schedules.size).toBe(1);
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
