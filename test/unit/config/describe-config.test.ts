import { describe, expect, it } from 'vitest';
import { configToJson, describeConfig, validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { entries } from './config-entries.js';

function config(...lines: string[]): ReplicationConfig {
  const result = validateConfig(entries(...lines), '/etc/refrelay/replication.config', 'node-a');
  if (!result.config) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const sample = config(
  'replication.storePath=/store',
  'replication.httpToken=t0ps3cret',
  'replication.lockErrorMaxRetries=3',
  'remote.eu.mirror.url=https://bot:pa55@host/${name}.git',
  'remote.eu.mirror.url=git@host:${name}.git',
  'remote.eu.mirror.push=+refs/heads/*:refs/heads/*',
  'remote.eu.mirror.projects=team/*',
  'remote.eu.mirror.excludeProjects=^team/x/.*',
  'remote.eu.mirror.excludedRefsPattern=refs/changes/.*',
  'remote.eu.mirror.replicationDelay=90s',
  'remote.eu.mirror.timeout=30',
  'remote.eu.mirror.pushDeadline=2h',
  'remote.eu.mirror.replicatePermissions=false',
);

describe('describeConfig', () => {
  const text = describeConfig(sample);

  it('lists each remote with its URLs, refspecs, filters and delays', () => {
    expect(text).toContain('remote "eu.mirror"\n');
    expect(text).toContain('  url: git@host:${name}.git\n');
    expect(text).toContain('  push: +refs/heads/*:refs/heads/* (forced)\n');
    expect(text).toContain('  projects: team/*\n');
    expect(text).toContain('  excludeProjects: ^team/x/.*\n');
    expect(text).toContain('  excludedRefsPattern: refs/changes/.*\n');
    expect(text).toContain('  replicationDelay: 1m30s\n');
    expect(text).toContain('  replicationRetry: 1m\n');
    expect(text).toContain('  timeout: 30s without progress\n');
    expect(text).toContain('  pushDeadline: 2h\n');
    expect(text).toContain('  replicatePermissions: false\n  replicateNoteDbMetaRefs: true\n');
    expect(text).toContain('  mirror: false\n  deletes: pushed (forced refspec +refs/heads/*:refs/heads/*)\n');
    expect(text).toContain('storePath: /store\n');
  });

  it('lists the warnings', () => {
    expect(text).toContain('warnings: 1\n');
    expect(text).toContain('replication.lockErrorMaxRetries: ');
  });

  it('never shows a URL password or the HTTP token', () => {
    expect(text).not.toContain('pa55');
    expect(text).not.toContain('t0ps3cret');
    expect(text).toContain('  url: https://bot:***@host/${name}.git\n');
  });
});

describe('configToJson', () => {
  const json = configToJson(sample);

  it('gives durations in ms and patterns as their text, and survives JSON', () => {
    const roundTrip = JSON.parse(JSON.stringify(json)) as typeof json;
    expect(roundTrip).toEqual(json);
    expect(roundTrip).toMatchObject({ storePath: '/store', distributionIntervalMs: 10_000, basePath: null });
    const remote = (roundTrip.remotes as Record<string, unknown>[])[0];
    expect(remote).toMatchObject({
      name: 'eu.mirror',
      replicationDelayMs: 90_000,
      timeoutMs: 30_000,
      pushDeadlineMs: 7_200_000,
      excludedRefsPatterns: ['refs/changes/.*'],
      replicatePermissions: false,
      replicateNoteDbMetaRefs: true,
      mirror: false,
      deletes: 'pushed (forced refspec +refs/heads/*:refs/heads/*)',
      projects: [{ text: 'team/*', kind: 'prefix' }],
      excludeProjects: [{ text: '^team/x/.*', kind: 'regex' }],
      push: [{ text: '+refs/heads/*:refs/heads/*', force: true, src: 'refs/heads/*', dst: 'refs/heads/*' }],
    });
  });

  it('never shows a URL password or the HTTP token', () => {
    const text = JSON.stringify(json);
    expect(text).not.toContain('pa55');
    expect(text).not.toContain('t0ps3cret');
  });
});
