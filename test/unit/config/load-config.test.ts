import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findConfigFile, loadConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { ConfigError, formatConfigProblem } from '../../../src/errors.js';
import { refsForRemote } from '../../../src/intake/plan-tasks.js';
import { fixturesDir, repoRoot } from '../../support/paths.js';

const dir = join(fixturesDir, 'config');
const fixture = (name: string): string => join(dir, name);
const load = (name: string): ReplicationConfig => loadConfig({ file: fixture(name), hostname: 'test-host' });

/** Expected-message files write FILE as the fixture's base name; put the path used back in. */
function expectedLines(file: string, expectedFile: string): string[] {
  const name = basename(file);
  return readFileSync(expectedFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (line.startsWith(`${name}: `) ? `${file}: ${line.slice(name.length + 2)}` : line));
}

function loadError(file: string): ConfigError {
  try {
    loadConfig({ file, hostname: 'test-host' });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`${file} loaded without problems`);
}

describe('loadConfig on valid fixtures', () => {
  it('loads the minimal config with every default', () => {
    const config = load('valid-minimal.config');
    expect(config).toMatchObject({ storePath: '/tmp/refrelay-store', nodeId: 'test-host', file: fixture('valid-minimal.config') });
    expect(config.remotes.map((r) => [r.name, r.urls, r.push.map((s) => s.text)])).toEqual([['backup', ['/srv/backup/${name}.git'], ['refs/*:refs/*']]]);
    expect(config.warnings).toEqual([]);
  });

  it('loads every key of the full config', () => {
    const config = load('valid-full.config');
    expect(config).toMatchObject({
      storePath: join(dir, 'store'),
      basePath: '/srv/git',
      nodeId: 'master-1.example_com',
      distributionIntervalMs: 5000,
      randomDelayMs: 250,
      lockStaleMs: 120_000,
      maxRetries: 7,
      httpListen: '0.0.0.0:9500',
      shutdownGraceMs: 45_000,
      defaultForceUpdate: true,
      caughtUpThresholdMs: 10_000,
      httpToken: 's3cr3t-token',
      httpTokenFile: '/etc/refrelay/token',
      maxPushes: 16,
      bulkShares: 2,
      fullListingIntervalMs: 120_000,
      warnings: [],
    });
    expect(config).toMatchObject({ secureConfig: '/etc/refrelay/secure.config', storeUmask: 0o002, allowInsecureSecrets: false });
    const [full, defaults] = config.remotes;
    expect(full).toMatchObject({
      name: 'full',
      urls: ['ssh://git@mirror.example.com:2222/${name}.git', 'file:///srv/mirror/${name}.git'],
      threads: 3,
      replicationDelayMs: 2000,
      rescheduleDelayMs: 10_000,
      replicationRetryMs: 300_000,
      replicationMaxRetries: 4,
      timeoutMs: 60_000,
      pushDeadlineMs: 7_200_000,
      mirror: true,
      createMissingRepositories: false,
      remoteNameStyle: 'dash',
      shares: 3,
      sshIdentity: '/etc/refrelay/id_ed25519',
      sshCommand: 'ssh -o BatchMode=yes',
      sshStrictHostKeyChecking: 'accept-new',
    });
    expect(full?.push.map((s) => s.text)).toEqual(['refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*']);
    expect(full?.projects.map((p) => [p.text, p.kind])).toEqual([
      ['team/*', 'prefix'],
      ['^lib-[a-z]+', 'regex'],
      ['tools', 'exact'],
    ]);
    expect(full?.excludeProjects.map((p) => p.text)).toEqual(['team/private', '^team/archive/.*']);
    expect(full?.excludedRefsPatterns.map((r) => r.matches('refs/meta/config'))).toEqual([false, true]);
    expect(defaults?.push.map((s) => s.text)).toEqual(['+refs/*:refs/*']);
    expect(defaults?.replicationMaxRetries).toBe(7);
  });

  describe('a real Gerrit replication.config', () => {
    const config = load('gerrit-real.config');
    const remote = (name: string) => config.remotes.find((r) => r.name === name);

    it('keeps remote names with dots and slashes, in file order', () => {
      expect(config.remotes.map((r) => r.name)).toEqual(['eu.mirror', 'github/public', 'archive']);
    });

    it('keeps both URLs and all push refspecs of the dotted remote in order', () => {
      expect(remote('eu.mirror')?.urls).toEqual(['git@eu-mirror.example.com:gerrit/${name}.git', 'ssh://git@eu-mirror-2.example.com:29418/gerrit/${name}.git']);
      expect(remote('eu.mirror')?.push.map((s) => [s.text, s.force])).toEqual([
        ['+refs/heads/*:refs/heads/*', true],
        ['+refs/tags/*:refs/tags/*', true],
        ['refs/changes/*:refs/changes/*', false],
      ]);
    });

    it('honours mixed-case key names and Gerrit units', () => {
      expect(config.storePath).toBe('/tmp/refrelay-store');
      expect(config.distributionIntervalMs).toBe(3000);
      expect(remote('eu.mirror')).toMatchObject({ replicationDelayMs: 5000, replicationRetryMs: 120_000, threads: 4 });
      expect(config).toMatchObject({ autoReload: true, replicateOnStartup: false });
    });

    it('strips inline comments and unquotes \\" escapes', () => {
      expect(remote('eu.mirror')?.push[2]?.text).toBe('refs/changes/*:refs/changes/*');
      expect(remote('eu.mirror')?.sshCommand).toBe('ssh -o "ServerAliveInterval=15" -i /etc/gerrit/keys/eu#1');
    });

    it('accepts a url without ${name} for a remote with one exact project, forced by defaultForceUpdate', () => {
      expect(remote('archive')).toMatchObject({ urls: ['/srv/archive/all-users.git'], createMissingRepositories: false });
      expect(remote('archive')?.push.map((s) => s.text)).toEqual(['+refs/*:refs/*']);
    });

    it('applies the filters and the remote-specific settings', () => {
      expect(remote('eu.mirror')?.projects.map((p) => p.text)).toEqual(['platform/*', '^tools/(build|ci)-.*']);
      expect(remote('github/public')).toMatchObject({
        remoteNameStyle: 'basenameOnly',
        mirror: true,
        timeoutMs: 30_000,
        rescheduleDelayMs: 3000,
        replicationMaxRetries: 10,
      });
      expect(remote('eu.mirror')).toMatchObject({ replicatePermissions: false, replicateNoteDbMetaRefs: true });
    });

    it('warns once about each Gerrit-only key, naming it', () => {
      const file = fixture('gerrit-real.config');
      expect(config.warnings.map(formatConfigProblem)).toEqual(expectedLines(file, fixture('gerrit-real.warnings')));
    });
  });
});

describe('the shipped replication.config.example', () => {
  const config = loadConfig({ file: join(repoRoot, 'replication.config.example'), hostname: 'test-host' });

  it('loads without a warning', () => {
    expect(config.warnings).toEqual([]);
  });

  it('keeps the branches under wip/ from the public mirror, and only those', () => {
    const remote = config.remotes.find((r) => r.name === 'github.public');
    if (remote === undefined) throw new Error('no remote github.public');
    const refs = ['refs/heads/main', 'refs/heads/wip', 'refs/heads/wip/experiment', 'refs/heads/wip/a/b', 'refs/heads/wipe', 'refs/tags/v1'];
    expect(refsForRemote(remote, refs)).toEqual(['refs/heads/main', 'refs/heads/wip', 'refs/heads/wipe', 'refs/tags/v1']);
  });
});

describe('loadConfig on invalid fixtures', () => {
  const invalid = readdirSync(dir)
    .filter((name) => name.startsWith('invalid-') && name.endsWith('.config'))
    .sort();

  it('has invalid fixtures, each with its expected messages', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(7);
    for (const name of invalid) expect(readdirSync(dir)).toContain(name.replace(/\.config$/, '.expected'));
  });

  it.each(invalid)('reports exactly the expected problems for %s', (name) => {
    const file = fixture(name);
    const error = loadError(file);
    const expected = expectedLines(file, fixture(name.replace(/\.config$/, '.expected')));
    expect(error.problems.map(formatConfigProblem)).toEqual(expected);
    expect(error.message).toBe(expected.join('\n'));
    expect(error.code).toBe('CONFIG_INVALID');
  });

  it('reports a missing file as a problem, not a crash', () => {
    const file = fixture('does-not-exist.config');
    expect(loadError(file).problems).toEqual([{ file, key: '(file)', message: 'cannot read the file: No such file or directory' }]);
  });
});

describe('findConfigFile', () => {
  it('prefers the --config flag', () => {
    expect(findConfigFile({ flag: 'a.config', env: { REFRELAY_CONFIG: '/b.config' }, cwd: '/w' })).toBe('a.config');
  });

  it('then $REFRELAY_CONFIG', () => {
    expect(findConfigFile({ flag: undefined, env: { REFRELAY_CONFIG: '/b.config' }, cwd: '/w' })).toBe('/b.config');
  });

  it('then replication.config in the working directory', () => {
    expect(findConfigFile({ env: {}, cwd: '/w' })).toBe('/w/replication.config');
    expect(findConfigFile({ flag: '', env: { REFRELAY_CONFIG: '' }, cwd: '/w' })).toBe('/w/replication.config');
  });
});
