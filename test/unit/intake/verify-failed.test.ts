import { describe, expect, it } from 'vitest';
import { describeFailedInSync, failedNowInSync } from '../../../src/intake/verify-failed.js';
import type { DriftReport } from '../../../src/intake/verify.js';
import type { Destination } from '../../../src/intake/plan-tasks.js';
import type { Task } from '../../../src/task/task.js';
import { configOf } from '../schedule/scheduler-harness.js';

const config = configOf(['remote.dr.url=/dest/${name}.git', 'remote.gh.url=/gh/${name}.git']);
const remote = (name: string) => config.remotes.find((candidate) => candidate.name === name)!;
const destinations: Destination[] = [
  { project: 'app', remote: remote('dr'), template: '/dest/${name}.git', uri: '/dest/app.git' },
  { project: 'lib', remote: remote('dr'), template: '/dest/${name}.git', uri: '/dest/lib.git' },
  { project: 'app', remote: remote('gh'), template: '/gh/${name}.git', uri: '/gh/app.git' },
];

function report(destination: Destination, state: DriftReport['state'], fixRefs: string[] = []): DriftReport {
  return {
    project: destination.project,
    remote: destination.remote.name,
    uri: destination.uri,
    state,
    refs: 3,
    missing: fixRefs,
    different: [],
    extra: [],
    fixRefs,
    mirror: false,
  };
}

/** Verify began reading the destinations at this time (less the clock margin). */
const READ_BEFORE = 2_000;

const failed = (
  refs: string[],
  project = 'app',
  uri = '/dest/app.git',
  remoteName = 'dr',
  at = 1_000,
): { key: string; task: Task; reason?: { at: number } } => ({ key: refs.join(','), task: { project, refs, uri, remote: remoteName }, reason: { at } });

describe('failed tasks verify finds needless', () => {
  it('keeps a task that failed after verify began reading, or whose failure time is unknown: an older reading does not judge it', () => {
    const reports = destinations.map((destination) => report(destination, 'in-sync'));
    const before = failed(['refs/heads/main']);
    const after = failed(['refs/heads/next'], 'app', '/dest/app.git', 'dr', READ_BEFORE);
    const unknown = { ...failed(['refs/heads/lib']), reason: undefined };
    expect(failedNowInSync([before, after, unknown], destinations, reports, READ_BEFORE)).toEqual([{ remote: 'dr', uri: '/dest/app.git', tasks: [before] }]);
  });

  it('keeps a task any of whose refs verify would repair, and takes one whose refs all match', () => {
    const reports = [report(destinations[0]!, 'drift', ['refs/heads/blocked']), report(destinations[1]!, 'in-sync'), report(destinations[2]!, 'in-sync')];
    const blocked = failed(['refs/heads/blocked']);
    const main = failed(['refs/heads/main']);
    const both = failed(['refs/heads/main', 'refs/heads/blocked']);
    const lib = failed(['refs/heads/x'], 'lib', '/dest/lib.git');
    const found = failedNowInSync([blocked, main, both, lib], destinations, reports, READ_BEFORE);
    expect(found).toEqual([
      { remote: 'dr', uri: '/dest/app.git', tasks: [main] },
      { remote: 'dr', uri: '/dest/lib.git', tasks: [lib] },
    ]);
  });

  it('takes a full-sync task only when the whole destination is in sync, and nothing of an unreachable destination', () => {
    const all = failed(['..all..']);
    expect(
      failedNowInSync(
        [all],
        destinations,
        [report(destinations[0]!, 'drift', ['refs/heads/x']), report(destinations[1]!, 'in-sync'), report(destinations[2]!, 'in-sync')],
        READ_BEFORE,
      ),
    ).toEqual([]);
    expect(
      failedNowInSync(
        [all],
        destinations,
        [report(destinations[0]!, 'in-sync'), report(destinations[1]!, 'in-sync'), report(destinations[2]!, 'in-sync')],
        READ_BEFORE,
      ),
    ).toEqual([{ remote: 'dr', uri: '/dest/app.git', tasks: [all] }]);
    expect(
      failedNowInSync(
        [failed(['refs/heads/main'])],
        destinations,
        [report(destinations[0]!, 'unreachable'), report(destinations[1]!, 'in-sync'), report(destinations[2]!, 'in-sync')],
        READ_BEFORE,
      ),
    ).toEqual([]);
  });

  it('matches remote, project and URI together, and ignores tasks of destinations verify did not read', () => {
    const reports = destinations.map((destination) => report(destination, 'in-sync'));
    const wrongRemote = failed(['refs/heads/main'], 'app', '/dest/app.git', 'gh');
    const wrongProject = failed(['refs/heads/main'], 'lib', '/dest/app.git');
    const elsewhere = failed(['refs/heads/main'], 'app', '/other/app.git');
    expect(failedNowInSync([wrongRemote, wrongProject, elsewhere], destinations, reports, READ_BEFORE)).toEqual([]);
    expect(failedNowInSync([failed(['refs/heads/main'], 'app', '/gh/app.git', 'gh')], destinations, reports, READ_BEFORE).map((group) => group.uri)).toEqual([
      '/gh/app.git',
    ]);
  });

  it("says what it found, or what --fix dropped, in verify's columns", () => {
    const one = { remote: 'dr', uri: '/dest/app.git', tasks: [1] };
    const two = { remote: 'dr', uri: '/dest/app.git', tasks: [1, 2] };
    expect(describeFailedInSync(one, undefined)).toBe(
      'failed/      dr /dest/app.git: 1 failed task whose refs are now in sync; `refrelay verify --fix` drops it',
    );
    expect(describeFailedInSync(two, undefined)).toBe(
      'failed/      dr /dest/app.git: 2 failed tasks whose refs are now in sync; `refrelay verify --fix` drops them',
    );
    expect(describeFailedInSync(two, 2)).toBe('failed/      dr /dest/app.git: dropped 2 failed tasks whose refs are now in sync');
  });
});
