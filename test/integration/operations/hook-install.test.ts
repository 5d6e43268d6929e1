import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, gitEnv, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

function setup(): { root: string; base: string; config: string; repos: string[] } {
  const root = tempDir('refrelay-hooks');
  const base = join(root, 'base');
  const repos = ['one', 'team/two'].map((project) => initBare(join(base, `${project}.git`)));
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    '[remote "mirror"]',
    `  url = ${join(root, 'dest')}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  return { root, base, config, repos };
}

const hookFiles = (repo: string): string[] =>
  readdirSync(join(repo, 'hooks'))
    .filter((name) => !name.endsWith('.sample'))
    .sort();

describe('refrelay hook install / uninstall', () => {
  it('installs on every repository, a real push queues the update, and drain delivers it', async () => {
    const s = setup();
    const dry = runCli(['hook', 'install', '--all', '--config', s.config, '--dry-run']);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('dry run: 2 hooks would change, 0 unchanged');
    for (const repo of s.repos) expect(hookFiles(repo)).toEqual([]);

    expect(runCli(['hook', 'install', '--all', '--config', s.config]).stdout).toContain('2 hooks changed, 0 unchanged');
    expect(runCli(['hook', 'install', '--all', '--config', s.config]).stdout).toContain('0 hooks changed, 2 unchanged');

    const work = makeWorkTree(join(s.root, 'work'), 2);
    const push = spawnSync('git', ['push', s.repos[1]!, 'main'], { cwd: work, env: gitEnv, encoding: 'utf8' });
    expect(push.status).toBe(0);
    expect(push.stderr).toMatch(/remote: refrelay: queued 1 task for team\/two/);
    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    expect((await node.exited).code).toBe(0);
    expect(refsOf(join(s.root, 'dest', 'team', 'two.git'))).toEqual(refsOf(s.repos[1]!));
  });

  it('keeps an existing hook, runs it first with the same input, and uninstall restores it exactly', () => {
    const s = setup();
    const repo = s.repos[0]!;
    const original = '#!/bin/sh\ncat > "$GIT_DIR/original-hook-saw"\nexit 0\n';
    writeFileSync(join(repo, 'hooks', 'post-receive'), original, { mode: 0o755 });
    const installed = runCli(['hook', 'install', '--repo', repo, '--config', s.config]);
    expect(installed.stdout).toContain('install (existing hook kept and run first)');
    expect(hookFiles(repo)).toEqual(['post-receive', 'post-receive.refrelay-chained']);

    const work = makeWorkTree(join(s.root, 'work'), 1);
    const push = spawnSync('git', ['push', repo, 'main'], { cwd: work, env: gitEnv, encoding: 'utf8' });
    expect(push.status).toBe(0);
    expect(readFileSync(join(repo, 'original-hook-saw'), 'utf8')).toMatch(/^0{40} [0-9a-f]{40} refs\/heads\/main\n$/);
    expect(push.stderr).toMatch(/remote: refrelay: queued 1 task for one/);

    expect(runCli(['hook', 'uninstall', '--repo', repo, '--config', s.config]).stdout).toContain('remove (the kept hook goes back)');
    expect(hookFiles(repo)).toEqual(['post-receive']);
    expect(readFileSync(join(repo, 'hooks', 'post-receive'), 'utf8')).toBe(original);
  });

  it('never fails the push when refrelay cannot queue, and says so loudly', () => {
    const s = setup();
    const repo = s.repos[0]!;
    // Neither the store nor the local spool can be written: a file stands where each folder should be.
    const notAFolder = join(s.root, 'not-a-folder');
    writeFileSync(notAFolder, 'the store is not a folder');
    const broken = writeConfig(
      join(s.root, 'broken.config'),
      [
        '[replication]',
        `  storePath = ${notAFolder}`,
        `  spoolPath = ${join(notAFolder, 'spool')}`,
        `  basePath = ${s.base}`,
        '[remote "mirror"]',
        `  url = ${join(s.root, 'dest')}/\${name}.git`,
      ],
      { initStore: false },
    );
    runCli(['hook', 'install', '--repo', repo, '--config', broken]);
    const work = makeWorkTree(join(s.root, 'work'), 1);
    const push = spawnSync('git', ['push', repo, 'main'], { cwd: work, env: gitEnv, encoding: 'utf8' });
    expect(push.status).toBe(0);
    expect(push.stderr).toMatch(/remote: refrelay: ENQUEUE FAILED in .*one\.git: this update is not queued for replication; run 'refrelay verify --fix'/);
    expect(git(repo, ['rev-parse', 'main']).trim()).toBe(git(work, ['rev-parse', 'HEAD']).trim());
  });

  it('a --repo that does not exist or is a file is a usage error (exit 2) saying which, for install and uninstall alike', () => {
    const s = setup();
    const file = join(s.root, 'a-file');
    writeFileSync(file, 'not a repository');
    const missing = join(s.root, 'nosuch.git');
    for (const mode of ['install', 'uninstall']) {
      expect(runCli(['hook', mode, '--repo', missing, '--config', s.config])).toEqual({
        status: 2,
        stdout: '',
        stderr: `refrelay: hook: ${missing} does not exist\n`,
      });
      expect(runCli(['hook', mode, '--repo', file, '--config', s.config])).toEqual({
        status: 2,
        stdout: '',
        stderr: `refrelay: hook: ${file} is not a folder\n`,
      });
    }
  });

  it('a --hooks-path that is a file is a usage error (exit 2), and nothing is written', () => {
    const s = setup();
    const file = join(s.root, 'hooks-file');
    writeFileSync(file, 'not a folder');
    for (const mode of ['install', 'uninstall']) {
      expect(runCli(['hook', mode, '--hooks-path', file, '--config', s.config])).toEqual({
        status: 2,
        stdout: '',
        stderr: `refrelay: hook: --hooks-path ${file} is not a folder\n`,
      });
    }
    expect(readFileSync(file, 'utf8')).toBe('not a folder');
  });

  it('a reference-transaction hook queues only committed updates', () => {
    const s = setup();
    const repo = s.repos[0]!;
    runCli(['hook', 'install', '--repo', repo, '--kind', 'reference-transaction', '--config', s.config]);
    git(repo, [
      'update-ref',
      'refs/heads/direct',
      git(repo, ['hash-object', '-t', 'commit', '--stdin', '-w'], {
        input: 'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a@b> 0 +0000\ncommitter a <a@b> 0 +0000\n\nx\n',
      }).trim(),
    ]);
    const waiting = join(s.root, 'store', 'ref-updates', 'waiting');
    expect(existsSync(waiting) ? readdirSync(waiting) : []).toHaveLength(1);
  });
});
