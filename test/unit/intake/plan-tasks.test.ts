import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { destinationsOf, planTasks } from '../../../src/intake/plan-tasks.js';
import { fixTasks } from '../../../src/intake/verify.js';
import { STORE_RECORD_MAX_BYTES } from '../../../src/runtime/bounded-read.js';
import { encodeTask, FULL_SYNC_REF, taskKey } from '../../../src/task/task.js';
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

describe('planTasks keeps every task file within what readers accept', () => {
  const manyRefs = Array.from({ length: 60_001 }, (_, i) => `refs/heads/topic/${String(i).padStart(6, '0')}`);

  it('cuts an update of 60,001 refs into tasks of one URI whose files are each under 1 MiB, every ref in exactly one', () => {
    const tasks = planTasks(config('remote.dr.url=/dest/dr/${name}.git'), 'app', [...manyRefs].reverse());
    expect(tasks.length).toBeGreaterThan(1);
    for (const task of tasks) {
      expect(task).toMatchObject({ project: 'app', uri: '/dest/dr/app.git', remote: 'dr' });
      expect(Buffer.byteLength(encodeTask(task))).toBeLessThanOrEqual(STORE_RECORD_MAX_BYTES);
    }
    expect(tasks.flatMap((task) => task.refs)).toEqual(manyRefs);
  });

  it('cuts the repair of a destination missing 60,001 refs (verify --fix) the same way', () => {
    const cfg = config('remote.dr.url=/dest/dr/${name}.git');
    const destinations = destinationsOf(cfg, ['app'], []);
    const drift = {
      project: 'app',
      remote: 'dr',
      uri: '/dest/dr/app.git',
      state: 'drift' as const,
      refs: 0,
      missing: manyRefs,
      different: [],
      extra: [],
      mirror: false,
    };
    const tasks = fixTasks([{ ...drift, fixRefs: manyRefs }], destinations);
    expect(tasks.length).toBeGreaterThan(1);
    for (const task of tasks) expect(Buffer.byteLength(encodeTask(task))).toBeLessThanOrEqual(STORE_RECORD_MAX_BYTES);
    expect(tasks.flatMap((task) => task.refs)).toEqual(manyRefs);
  });

  it('cuts the same update the same way whatever order its refs came in, so queuing it twice makes the same files', () => {
    const cfg = config('remote.dr.url=/dest/dr/${name}.git');
    const keys = (refs: readonly string[]): string[] => planTasks(cfg, 'app', refs).map(taskKey);
    expect(keys([...manyRefs].reverse())).toEqual(keys(manyRefs));
  });
});
