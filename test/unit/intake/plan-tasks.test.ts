import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { planTasks } from '../../../src/intake/plan-tasks.js';
import { FULL_SYNC_REF } from '../../../src/task/task.js';
import { entries } from '../config/config-entries.js';

function config(...lines: string[]): ReplicationConfig {
  const result = validateConfig(entries('replication.storePath=/store', ...lines), '/etc/refrelay/replication.config', 'node-a');
  if (!result.config) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const GERRIT_UPDATE = [
  'refs/heads/main',
  'refs/meta/config',
  'refs/changes/01/1/1',
  'refs/changes/01/1/meta',
  'refs/users/01/1000001',
  'refs/sequences/changes',
  'refs/cache-automerge/ab/cdef',
];

const refsOf = (cfg: ReplicationConfig, refs: readonly string[]): Record<string, readonly string[]> =>
  Object.fromEntries(planTasks(cfg, 'app', refs).map((task) => [task.remote, task.refs]));

describe('planTasks keeps back the refs Gerrit would not push', () => {
  it('writes each remote only the refs its replicatePermissions and replicateNoteDbMetaRefs let through, never the automerge cache', () => {
    const cfg = config(
      'remote.defaults.url=/d/${name}.git',
      'remote.noperms.url=/p/${name}.git',
      'remote.noperms.replicatePermissions=false',
      'remote.nonotedb.url=/n/${name}.git',
      'remote.nonotedb.replicateNoteDbMetaRefs=false',
    );
    expect(refsOf(cfg, GERRIT_UPDATE)).toEqual({
      defaults: ['refs/heads/main', 'refs/meta/config', 'refs/changes/01/1/1', 'refs/changes/01/1/meta', 'refs/users/01/1000001', 'refs/sequences/changes'],
      noperms: ['refs/heads/main', 'refs/changes/01/1/1', 'refs/changes/01/1/meta', 'refs/users/01/1000001', 'refs/sequences/changes'],
      nonotedb: ['refs/heads/main', 'refs/meta/config', 'refs/changes/01/1/1', 'refs/users/01/1000001', 'refs/sequences/changes'],
    });
  });

  it('writes no task at all for an update of refs/meta/config alone to a remote with replicatePermissions = false', () => {
    const cfg = config('remote.m.url=/m/${name}.git', 'remote.m.replicatePermissions=false');
    expect(planTasks(cfg, 'app', ['refs/meta/config'])).toEqual([]);
  });

  it('passes a full sync through: the push decides ref by ref', () => {
    const cfg = config('remote.m.url=/m/${name}.git', 'remote.m.replicatePermissions=false', 'remote.m.replicateNoteDbMetaRefs=false');
    expect(planTasks(cfg, 'app', [FULL_SYNC_REF])).toEqual([{ project: 'app', refs: [FULL_SYNC_REF], uri: '/m/app.git', remote: 'm' }]);
  });
});
