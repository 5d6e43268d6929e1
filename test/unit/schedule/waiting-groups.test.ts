import { describe, expect, it } from 'vitest';
import { WaitingGroups } from '../../../src/schedule/waiting-groups.js';
import type { WaitingFolder, WaitingListing } from '../../../src/store/task-store.js';
import { FULL_SYNC_REF, uriKey, type Task } from '../../../src/task/task.js';
import { configOf, waitingFolder } from './scheduler-harness.js';

const config = configOf(['remote.mirror.url=/dest/mirror/${name}.git']);

const task = (project: string, full = false, remote = 'mirror'): Task => ({
  project,
  refs: [full ? FULL_SYNC_REF : 'refs/heads/main'],
  uri: `/dest/mirror/${project}.git`,
  remote,
});

/** A listing of these folders that says `changed` changed since the last one. */
function listing(folders: WaitingFolder[], changed: string[]): WaitingListing {
  const byName = new Map(folders.map((folder) => [folder.folder, folder]));
  return { folders, folder: (name) => byName.get(name), changed: new Set(changed), unlearned: 0, leftToPreferred: 0, loose: [] };
}

describe('waiting groups kept between passes', () => {
  it('regroups only the URIs the listing says changed: a URI left out keeps its group as it was', () => {
    const groups = new WaitingGroups();
    const a = waitingFolder(task('a'), { oldestMtimeMs: 5 });
    const b = waitingFolder(task('b'), { oldestMtimeMs: 7 });
    expect([...groups.update(config, listing([a, b], []))].sort()).toEqual([a.uriKey, b.uriKey].sort());
    const kept = groups.groups.get(a.uriKey);

    const aBulk = waitingFolder(task('a', true), { oldestMtimeMs: 1 });
    const bLater = waitingFolder(task('b'), { oldestMtimeMs: 9 });
    const changed = groups.update(config, listing([a, aBulk, bLater], [b.uriKey]));

    expect([...changed]).toEqual([b.uriKey]);
    // a's bulk folder is not looked at: the listing did not say a changed.
    expect(groups.groups.get(a.uriKey)).toBe(kept);
    expect(groups.groups.get(b.uriKey)).toMatchObject({ oldestMtimeMs: 9 });
    groups.update(config, listing([aBulk, bLater], [a.uriKey]));
    expect(groups.groups.get(a.uriKey)).toMatchObject({ oldestMtimeMs: 1, lane: 'bulk' });
    groups.update(config, listing([aBulk], [b.uriKey]));
    expect([...groups.groups.keys()]).toEqual([a.uriKey]);
  });

  it('keeps refused folders per URI, and regroups everything under a new config', () => {
    const groups = new WaitingGroups();
    const refused = waitingFolder(task('c', false, 'gone'), { oldestMtimeMs: 3 });
    const a = waitingFolder(task('a'), { oldestMtimeMs: 5 });
    groups.update(config, listing([a, refused], []));
    expect(groups.untrusted().map((entry) => [entry.folder.uriKey, entry.reason])).toEqual([
      [uriKey('/dest/mirror/c.git'), `remote "gone" is not configured in ${config.file}`],
    ]);

    const withGone = configOf(['remote.mirror.url=/dest/mirror/${name}.git', 'remote.gone.url=/dest/mirror/${name}.git']);
    const changed = new Set(groups.update(withGone, listing([a, refused], [])));

    expect(changed).toEqual(new Set([a.uriKey, refused.uriKey]));
    expect(groups.untrusted()).toEqual([]);
    expect(groups.groups.get(refused.uriKey)?.remote.name).toBe('gone');
  });
});
