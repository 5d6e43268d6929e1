import { describe, expect, it } from 'vitest';
import { changedConfigFiles } from '../../../src/config/config-stamp.js';

describe('changedConfigFiles', () => {
  const stamp = (...pairs: Array<[string, string]>) => new Map(pairs);

  it('names the files added, removed and changed, sorted', () => {
    const before = stamp(
      ['/c/replication.config', '1:10:7'],
      ['/c/replication', 'folder'],
      ['/c/replication/a.config', '1:5:8'],
      ['/c/replication/b.config', '1:5:9'],
    );
    const after = stamp(
      ['/c/replication.config', '1:10:7'],
      ['/c/replication', 'folder'],
      ['/c/replication/b.config', '2:6:9'],
      ['/c/replication/c.config', '1:5:10'],
    );
    expect(changedConfigFiles(before, after)).toEqual(['/c/replication/a.config', '/c/replication/b.config', '/c/replication/c.config']);
  });

  it('names nothing when nothing moved, and the folder when it appears empty', () => {
    const before = stamp(['/c/replication.config', '1:10:7']);
    expect(changedConfigFiles(before, stamp(['/c/replication.config', '1:10:7']))).toEqual([]);
    expect(changedConfigFiles(before, stamp(['/c/replication.config', '1:10:7'], ['/c/replication', 'folder']))).toEqual(['/c/replication']);
  });
});
