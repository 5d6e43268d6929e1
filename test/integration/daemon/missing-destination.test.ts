import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { commitFile, git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

describe('a destination created by the daemon', () => {
  it('receives every local ref its refspecs match, not only the one queued, and verify finds it in sync', async () => {
    const root = tempDir('refrelay-missing-dest');
    const base = join(root, 'base');
    const source = initBare(join(base, 'team', 'app.git'));
    const work = makeWorkTree(join(root, 'work'), 2);
    git(work, ['branch', 'release', 'HEAD~1']);
    git(work, ['checkout', '-q', '-b', 'feature']);
    commitFile(work, 'feature.txt', 'feature\n');
    git(work, ['tag', 'v1', 'main']);
    git(work, ['tag', '-a', '-m', 'second release', 'v2', 'feature']);
    git(work, ['push', '-q', source, 'main', 'release', 'feature', 'v1', 'v2', 'feature:refs/changes/01/1/1', 'feature:refs/heads/wip/skip']);
    const viaPath = join(root, 'dest-path');
    const viaFile = join(root, 'dest-file');
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "path"]',
      `  url = ${viaPath}/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/*',
      '  push = refs/tags/*:refs/tags/*',
      '  excludedRefsPattern = refs/heads/wip/.*',
      '  replicationDelay = 0',
      '[remote "file"]',
      `  url = file://${viaFile}/\${name}.git`,
      '  push = +refs/heads/*:refs/mirror/heads/*',
      '  createMissingRepositories = true',
      '  replicationDelay = 0',
    ]);
    const enqueued = runCli(['enqueue', '--config', config, '--project', 'team/app', '--ref', 'refs/heads/main']);
    expect(enqueued.stdout).toBe('refrelay: queued 2 tasks for team/app\n');
    expect(existsSync(join(viaPath, 'team', 'app.git'))).toBe(false);

    const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true });
    stops.push(() => node.stop());
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);

    const local = refsOf(source);
    // Every branch and tag (tag objects as they are), minus refs/changes (no refspec) and the excluded wip/.
    expect(refsOf(join(viaPath, 'team', 'app.git'))).toEqual(
      new Map([...local].filter(([ref]) => /^refs\/(heads|tags)\//.test(ref) && !ref.startsWith('refs/heads/wip/'))),
    );
    expect([...refsOf(join(viaPath, 'team', 'app.git')).keys()]).toEqual([
      'refs/heads/feature',
      'refs/heads/main',
      'refs/heads/release',
      'refs/tags/v1',
      'refs/tags/v2',
    ]);
    // Mapped through the refspec: the new repository gets every branch under its destination names.
    expect(refsOf(join(viaFile, 'team', 'app.git'))).toEqual(
      new Map([...local].filter(([ref]) => ref.startsWith('refs/heads/')).map(([ref, oid]) => [ref.replace('refs/heads/', 'refs/mirror/heads/'), oid])),
    );

    const verify = runCli(['verify', '--config', config]);
    expect(verify.stdout).not.toContain('DRIFT');
    expect(verify.status).toBe(0);
  });
});
