import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../../support/cli.js';
import { freePort } from '../../support/free-port.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { initStoreSync, RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { readWaitingTasks } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('refrelay replicate', () => {
  it('--all --wait over 50 projects × 2 remotes reports the unreachable destination and exits 1; the rest is in sync', async () => {
    const root = tempDir('refrelay-replicate');
    const base = join(root, 'base');
    const work = makeWorkTree(join(root, 'work'), 2);
    git(work, ['tag', 'v1']);
    const projects = Array.from({ length: 50 }, (_, i) => `p${String(i).padStart(2, '0')}`);
    for (const project of projects) git(work, ['push', '-q', initBare(join(base, `${project}.git`)), 'main', 'v1']);
    const deadPort = await freePort();
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "good"]',
      `  url = ${join(root, 'good')}/\${name}.git`,
      '  threads = 4',
      '[remote "down"]',
      `  url = git://127.0.0.1:${deadPort}/\${name}.git`,
      '  projects = p07',
      '  replicationMaxRetries = 1',
      '  replicationRetry = 200ms',
    ]);
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      const result = runCli(['replicate', '--all', '--now', '--wait', '--config', config]);
      expect(result.stdout).toContain('queued full sync of 50 projects to 51 destination URLs');
      expect(result.stdout).toMatch(new RegExp(`git://127\\.0\\.0\\.1:${deadPort}/p07\\.git +FAILED: .*gave up after 2 attempts`));
      expect(result.stdout).toMatch(/replicate: 51\/51 finished \(50 done, 1 failed\)/);
      expect(result.status).toBe(1);
      for (const project of projects) expect(refsOf(join(root, 'good', `${project}.git`))).toEqual(refsOf(join(base, `${project}.git`)));
    } finally {
      node.signal('SIGTERM');
      await node.exited;
    }
  });

  /** A store, a base path and one remote "a" under `root`. */
  const oneRemoteConfig = (root: string): string =>
    writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '[remote "a"]',
      `  url = ${root}/d/\${name}.git`,
    ]);

  it('--wait with no daemon of the store running says once, on stderr, that nothing pushes until one runs', async () => {
    const root = tempDir('refrelay-replicate-alone');
    initBare(join(root, 'base', 'app.git'));
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 100ms',
      '  lockStale = 1s',
      '[remote "a"]',
      `  url = ${root}/d/\${name}.git`,
    ]);
    initStoreSync(join(root, 'store'));
    const waiting = startCli(['replicate', '--all', '--now', '--wait', '--config', config]);
    try {
      await waiting.waitForStderr('replicate: no node');
      expect(waiting.stderr()).toBe('replicate: no node of this store has beaten for 1s: the full syncs wait until a refrelay daemon of it runs\n');
    } finally {
      waiting.stop();
      await waiting.done;
    }
    expect(readWaitingTasks(join(root, 'store')).map((task) => task.project)).toEqual(['app']);
  });

  it('says "Nothing to replicate" when no project matches', () => {
    const root = tempDir('refrelay-replicate-none');
    const config = oneRemoteConfig(root);
    const result = runCli(['replicate', 'nothing/*', '--config', config]);
    expect(result).toMatchObject({ status: 0, stdout: 'Nothing to replicate\n' });
  });

  it('an exact name no project can have is a usage error (exit 2), as for enqueue --project', () => {
    const root = tempDir('refrelay-replicate-invalid');
    const config = oneRemoteConfig(root);
    expect(runCli(['replicate', '../x', '--config', config])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'refrelay: replicate: invalid project name "../x": has a ".." segment\n',
    });
  });
});

describe('refrelay verify', () => {
  it('finds each kind of drift, --fix queues exactly the drifted refs, and after a drain everything verifies', async () => {
    const root = tempDir('refrelay-verify');
    const base = join(root, 'base');
    const work = makeWorkTree(join(root, 'work'), 2);
    git(work, ['branch', 'stale']);
    git(work, ['branch', 'gone']);
    const source = initBare(join(base, 'app.git'));
    git(work, ['push', '-q', source, 'main', 'stale', 'gone']);
    const mirrorDest = initBare(join(root, 'mirror', 'app.git'));
    const plainDest = initBare(join(root, 'plain', 'app.git'));
    for (const dest of [mirrorDest, plainDest]) git(work, ['push', '-q', dest, 'main', 'stale', 'gone']);
    // Drift by hand: a missing ref, a different value, an extra ref.
    git(work, ['commit', '-q', '--allow-empty', '-m', 'newer']);
    git(work, ['push', '-q', source, 'main:refs/heads/new', '+HEAD:refs/heads/stale']);
    git(source, ['update-ref', '-d', 'refs/heads/gone']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "mirror"]',
      `  url = ${join(root, 'mirror')}/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/*',
      '  mirror = true',
      '  replicationDelay = 0',
      '[remote "plain"]',
      `  url = ${join(root, 'plain')}/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/*',
      '  replicationDelay = 0',
    ]);
    const first = runCli(['verify', '--config', config]);
    expect(first.status).toBe(1);
    expect(first.stdout).toContain(`DRIFT        mirror ${mirrorDest}: 1 missing (refs/heads/new), 1 different (refs/heads/stale), 1 extra (refs/heads/gone)`);
    expect(first.stdout).toContain(
      `DRIFT        plain ${plainDest}: 1 missing (refs/heads/new), 1 different (refs/heads/stale); 1 extra kept at the destination (mirror off): refs/heads/gone`,
    );

    const json = JSON.parse(runCli(['verify', '--json', '--config', config]).stdout) as { destinations: Array<{ remote: string; fixRefs: string[] }> };
    expect(json.destinations.map((d) => [d.remote, d.fixRefs])).toEqual([
      ['mirror', ['refs/heads/gone', 'refs/heads/new', 'refs/heads/stale']],
      ['plain', ['refs/heads/new', 'refs/heads/stale']],
    ]);
    const fix = runCli(['verify', '--fix', '--config', config]);
    expect(fix.stdout).toContain('queued 2 tasks to repair the drift');
    const node = RefrelayNode.start({ config, nodeId: 'n1', drain: true });
    expect((await node.exited).code).toBe(0);

    const after = runCli(['verify', '--config', config]);
    expect(after.stdout).toContain(`in sync      mirror ${mirrorDest} (3 refs)`);
    expect(after.stdout).toContain(`in sync      plain ${plainDest} (3 refs); 1 extra kept at the destination (mirror off): refs/heads/gone`);
    expect(after.status).toBe(0);
    expect(refsOf(mirrorDest)).toEqual(refsOf(source));
  });

  it('reports an unreachable destination without stopping, and exits 1', async () => {
    const root = tempDir('refrelay-verify-down');
    const base = join(root, 'base');
    git(makeWorkTree(join(root, 'work'), 1), ['push', '-q', initBare(join(base, 'app.git')), 'main']);
    const port = await freePort();
    writeFileSync(join(root, 'x'), '');
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '[remote "down"]',
      `  url = git://127.0.0.1:${port}/\${name}.git`,
      '[remote "up"]',
      `  url = ${join(root, 'up')}/\${name}.git`,
    ]);
    git(makeWorkTree(join(root, 'work2'), 1), ['push', '-q', initBare(join(root, 'up', 'app.git')), 'main']);
    const result = runCli(['verify', '--config', config]);
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`UNREACHABLE  down git://127\\.0\\.0\\.1:${port}/app\\.git: .*`));
    expect(result.stdout).toContain('2 destinations: 1 in sync, 0 drifted, 1 unreachable');
  });
});
