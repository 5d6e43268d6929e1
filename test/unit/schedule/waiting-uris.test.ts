import { describe, expect, it } from 'vitest';
import { groupByUri, type UntrustedFolder } from '../../../src/schedule/uri-groups.js';
import { listedUris, waitingByUri } from '../../../src/schedule/waiting-uris.js';
import { FULL_SYNC_REF, uriKey, type Task } from '../../../src/task/task.js';
import { configOf, waitingFolder } from './scheduler-harness.js';

const config = configOf(['remote.mirror.url=/dest/mirror/${name}.git', 'remote.dr.url=/dest/dr/${name}.git']);

const live = (project: string, remote = 'mirror', uri = `/dest/${remote}/${project}.git`): Task => ({ project, refs: ['refs/heads/main'], uri, remote });
const bulk = (project: string, remote = 'mirror'): Task => ({ ...live(project, remote), refs: [FULL_SYNC_REF] });

describe('waitingByUri: learned folders counted per remote and URI', () => {
  it('sums the task counts of a URI’s live and bulk folders and keeps the older mtime', () => {
    const folders = [
      waitingFolder(live('a'), { oldestMtimeMs: 500, taskCount: 3 }),
      waitingFolder(bulk('b'), { oldestMtimeMs: 700 }),
      waitingFolder(bulk('a'), { oldestMtimeMs: 200, taskCount: 2 }),
    ];
    expect(waitingByUri(folders)).toEqual([
      { remote: 'mirror', uri: '/dest/mirror/a.git', waiting: 5, oldestMtimeMs: 200 },
      { remote: 'mirror', uri: '/dest/mirror/b.git', waiting: 1, oldestMtimeMs: 700 },
    ]);
  });

  it('counts a URI once per remote its folders’ tasks name', () => {
    const shared = '/dest/shared.git';
    const folders = [
      waitingFolder(live('a', 'mirror', shared), { oldestMtimeMs: 1, taskCount: 2 }),
      waitingFolder({ ...live('a', 'dr', shared), refs: [FULL_SYNC_REF] }, { oldestMtimeMs: 2 }),
    ];
    expect(waitingByUri(folders)).toEqual([
      { remote: 'mirror', uri: shared, waiting: 2, oldestMtimeMs: 1 },
      { remote: 'dr', uri: shared, waiting: 1, oldestMtimeMs: 2 },
    ]);
  });

  it('shows a refused task’s remote of a megabyte cut short, as messages quote untrusted text', () => {
    const folders = [waitingFolder(live('a', 'r'.repeat(1024 * 1024), '/dest/mirror/a.git'), { oldestMtimeMs: 1 })];
    expect(waitingByUri(folders)).toEqual([{ remote: `"${'r'.repeat(64)}"… (1048576 characters)`, uri: '/dest/mirror/a.git', waiting: 1, oldestMtimeMs: 1 }]);
    // A configured remote of a long name is shown whole.
    const long = 'r'.repeat(200);
    expect(waitingByUri([waitingFolder(live('a', long, '/dest/mirror/a.git'), { oldestMtimeMs: 1 })])[0]!.remote).toBe(long);
  });

  it('is empty for no folders', () => {
    expect(waitingByUri([])).toEqual([]);
  });
});

describe('listedUris: a pass’s groups and refused folders', () => {
  it('counts each group by its task count, and the refused folders by theirs', () => {
    const refusedFolder = waitingFolder({ ...live('c'), remote: 'unknown' }, { oldestMtimeMs: 9, taskCount: 4 });
    const listing = [
      waitingFolder(live('a'), { oldestMtimeMs: 5, taskCount: 2 }),
      waitingFolder(bulk('a'), { oldestMtimeMs: 3, taskCount: 6 }),
      waitingFolder(live('b', 'dr'), { oldestMtimeMs: 7 }),
      refusedFolder,
    ];
    const untrusted: UntrustedFolder[] = [];
    const groups = groupByUri(config, listing, new WeakMap(), untrusted);

    expect([...listedUris(groups, untrusted)]).toEqual([
      { remote: 'mirror', uri: '/dest/mirror/a.git', uriKey: uriKey('/dest/mirror/a.git'), waiting: 8, oldestMtimeMs: 3 },
      { remote: 'dr', uri: '/dest/dr/b.git', uriKey: uriKey('/dest/dr/b.git'), waiting: 1, oldestMtimeMs: 7 },
      { remote: 'unknown', uri: '/dest/mirror/c.git', waiting: 4, oldestMtimeMs: 9 },
    ]);
    expect([...listedUris(new Map(), [])]).toEqual([]);
  });
});
