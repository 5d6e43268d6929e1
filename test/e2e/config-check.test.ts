import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixturesDir, repoRoot } from '../support/paths.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();

describe('refrelay config check', () => {
  it('prints every remote of a real Gerrit config with its URLs and exits 0', () => {
    const file = join(fixturesDir, 'config', 'gerrit-real.config');
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('eu.mirror');
    expect(result.stderr).toMatch(/^warning: .*authGroup/m);
  });

  it('accepts the shipped example without a warning, its excludedRefsPattern as written', () => {
    const result = runCli(['config', 'check', '--config', join(repoRoot, 'replication.config.example')]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('  excludedRefsPattern: ^refs/heads/wip/.*\n');
  });

  it('describes each remote of the shipped example exactly, with when it deletes destination refs', () => {
    const file = join(repoRoot, 'replication.config.example');
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(0);
    expect(result.stdout.slice(result.stdout.indexOf('remotes: 2\n'))).toBe(
      [
        'remotes: 2',
        '',
        'remote "dr"',
        `  from: ${file}`,
        '  url: ssh://git@dr.example.com/srv/git/${name}.git',
        '  push: +refs/*:refs/* (forced)',
        '  projects: all',
        '  excludeProjects: none',
        '  excludedRefsPattern: none',
        '  replicatePermissions: true',
        '  replicateNoteDbMetaRefs: true',
        '  threads: 2',
        '  shares: 100',
        '  replicationDelay: 15s',
        '  rescheduleDelay: 3s',
        '  replicationRetry: 1m',
        '  replicationMaxRetries: 0 (retry forever)',
        '  timeout: 30s without progress',
        '  pushDeadline: 2h',
        '  mirror: true',
        '  deletes: pushed (mirror); a full sync also deletes destination refs that no local ref maps to',
        '  createMissingRepositories: true',
        '  remoteNameStyle: slash',
        '  sshStrictHostKeyChecking: yes',
        '',
        'remote "github.public"',
        `  from: ${file}`,
        '  url: git@github.com:example/${name}.git',
        '  push: +refs/heads/*:refs/heads/* (forced)',
        '  push: refs/tags/*:refs/tags/*',
        '  projects: public/*',
        '  excludeProjects: public/attic/*',
        '  excludedRefsPattern: ^refs/heads/wip/.*',
        '  replicatePermissions: true',
        '  replicateNoteDbMetaRefs: true',
        '  threads: 1',
        '  shares: 100',
        '  replicationDelay: 15s',
        '  rescheduleDelay: 3s',
        '  replicationRetry: 1m',
        '  replicationMaxRetries: 0 (retry forever)',
        '  timeout: none',
        '  pushDeadline: none',
        '  mirror: false',
        '  deletes: pushed for refs a forced refspec maps (+refs/heads/*:refs/heads/*); not for refs/tags/*:refs/tags/* (not forced, mirror off)',
        '  createMissingRepositories: true',
        '  remoteNameStyle: basenameOnly',
        '  sshStrictHostKeyChecking: yes',
        'credentials (secure.config): none',
        '',
      ].join('\n'),
    );
  });

  it('says when a remote with neither a forced refspec nor mirror deletes nothing', () => {
    const root = tempDir('refrelay-config-check');
    const file = join(root, 'replication.config');
    writeFileSync(file, ['[replication]', `  storePath = ${join(root, 'store')}`, '[remote "m"]', '  url = /srv/m/${name}.git'].join('\n'));
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('  push: refs/*:refs/*\n');
    expect(result.stdout).toContain('  mirror: false\n  deletes: not pushed (no forced refspec, mirror off)\n');
  });

  it('warns about patterns written as a prefix, naming key, pattern and fix, prints them as written, exit 0', () => {
    const root = tempDir('refrelay-config-check');
    const file = join(root, 'replication.config');
    writeFileSync(
      file,
      [
        '[replication]',
        `  storePath = ${join(root, 'store')}`,
        '[remote "m"]',
        '  url = /srv/m/${name}.git',
        '  projects = ^team/',
        '  projects = ^team/app',
        '  excludedRefsPattern = ^refs/heads/wip/',
        '  excludedRefsPattern = refs/meta/config',
        '  excludedRefsPattern = ^refs/tags',
      ].join('\n'),
    );
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(0);
    expect(result.stderr.split('\n')).toEqual([
      `warning: ${file}: remote.m.projects: "^team/" matches no project: a ^regex must match the whole project name, as in Gerrit, ` +
        'and no project name ends in "/"; to select the projects under it, append .*: "^team/.*"',
      `warning: ${file}: remote.m.excludedRefsPattern: "^refs/heads/wip/" matches no ref: the pattern must match the whole ref name, as in Gerrit, ` +
        'and no ref name ends in "/"; to exclude the refs under it, append .*: "^refs/heads/wip/.*"',
      `warning: ${file}: remote.m.excludedRefsPattern: "^refs/tags" matches only a ref named exactly "refs/tags", never one under refs/tags/: ` +
        'the pattern must match the whole ref name, as in Gerrit; to exclude the refs under it, append /.*: "^refs/tags/.*"',
      '',
    ]);
    expect(result.stdout).toContain('  projects: ^team/, ^team/app\n');
    expect(result.stdout).toContain('  excludedRefsPattern: ^refs/heads/wip/, refs/meta/config, ^refs/tags\n');
    expect(result.stdout).toContain('warnings: 3\n');
  });

  it('prints JSON with durations in milliseconds', () => {
    const result = runCli(['config', 'check', '--json', '--config', join(repoRoot, 'replication.config.example')]);
    expect(result.status).toBe(0);
    const json = JSON.parse(result.stdout) as { remotes: Array<{ name: string; replicationDelayMs: number }> };
    expect(json.remotes.map((remote) => remote.name)).toEqual(['dr', 'github.public']);
    expect(json.remotes[0]!.replicationDelayMs).toBe(15_000);
  });

  it('reports every problem of an invalid file at once with exit 3', () => {
    const file = join(fixturesDir, 'config', 'invalid-values.config');
    const expected = readFileSync(join(fixturesDir, 'config', 'invalid-values.expected'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.replace(/^[^:]+:/, `${file}:`));
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(3);
    expect(result.stderr.trim().split('\n')).toEqual(expected);
    expect(result.stdout).toBe('');
  });

  it('refuses a Java regex it cannot match as Gerrit did, naming the key, with exit 3', () => {
    const file = join(fixturesDir, 'config', 'invalid-java-regex.config');
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(3);
    expect(result.stderr.trim().split('\n')).toEqual([
      `${file}: remote.mirror.projects: regular expression "^(team)/\\\\1": the backreference \\1 cannot be matched exactly as Java does ` +
        '(Java fails it when the group did not take part); rewrite the pattern without it ' +
        '(Gerrit accepts it; refrelay refuses it rather than replicate other projects than Gerrit would)',
      `${file}: remote.mirror.excludedRefsPattern: regular expression "refs/\\\\p{InGreek}.*": \\p{InGreek} (a Unicode block) has no equivalent here; ` +
        "write the block's code point range, e.g. [\\x{0370}-\\x{03FF}] " +
        '(Gerrit accepts it; refrelay refuses it rather than exclude other refs than Gerrit would)',
    ]);
  });

  it('shows Java patterns as written (git config spells a backslash \\\\)', () => {
    const root = tempDir('refrelay-config-check');
    const file = join(root, 'replication.config');
    writeFileSync(
      file,
      [
        '[replication]',
        `  storePath = ${join(root, 'store')}`,
        '[remote "m"]',
        '  url = /srv/m/${name}.git',
        '  projects = ^\\\\Qteam.x\\\\E/(?i)[a-z&&[^q]]+',
        '  excludedRefsPattern = refs/heads/wip\\\\d*+',
      ].join('\n'),
    );
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('  projects: ^\\Qteam.x\\E/(?i)[a-z&&[^q]]+\n');
    expect(result.stdout).toContain('  excludedRefsPattern: refs/heads/wip\\d*+\n');
  });

  it('loads a config with an invalid excludedRefsPattern, warning that it is ignored as Gerrit ignores it, exit 0', () => {
    const root = tempDir('refrelay-config-check');
    const file = join(root, 'replication.config');
    writeFileSync(
      file,
      [
        '[replication]',
        `  storePath = ${join(root, 'store')}`,
        '[remote "m"]',
        '  url = /srv/m/${name}.git',
        '  excludedRefsPattern = refs/(changes',
        '  excludedRefsPattern = refs/heads/wip/.*',
      ].join('\n'),
    );
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(
      `warning: ${file}: remote.m.excludedRefsPattern: invalid regular expression "refs/(changes": Unclosed group near index 13; ` +
        'ignored, as Gerrit ignores it: the refs it was written to keep back are replicated until the expression is fixed\n',
    );
    expect(result.stdout).toContain('  excludedRefsPattern: refs/heads/wip/.*\n');
  });

  it('finds the config through REFRELAY_CONFIG when --config is absent', () => {
    const file = join(repoRoot, 'replication.config.example');
    const result = runCli(['config', 'check'], { env: { REFRELAY_CONFIG: file } });
    expect(result.status).toBe(0);
  });

  it('says which file is missing with exit 3', () => {
    const result = runCli(['config', 'check', '--config', '/nonexistent/replication.config']);
    expect(result.status).toBe(3);
    expect(result.stderr).toContain('/nonexistent/replication.config');
  });

  it('rejects an unknown command with exit 2', () => {
    const result = runCli(['frobnicate']);
    expect(result.status).toBe(2);
  });
});
