import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { commitFile, git, gitEnv, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { startSshd, sshdAvailable, type Sshd } from '../../support/sshd.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

function lsRemote(url: string, env: NodeJS.ProcessEnv = {}): Map<string, string> {
  const out = execFileSync('git', ['ls-remote', url], { env: { ...gitEnv, ...env }, encoding: 'utf8' });
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'))
      .filter(([, ref]) => ref!.startsWith('refs/'))
      .map(([oid, ref]) => [ref!, oid!]),
  );
}

describe.skipIf(!sshdAvailable)('refrelay daemon --drain delivers to real destinations', () => {
  it('file://, git:// and ssh:// destinations end with exactly the source refs the refspecs match', async () => {
    const root = tempDir('refrelay-kinds');
    const base = join(root, 'base');
    const destFile = join(root, 'dest-file');
    const destGit = join(root, 'dest-git');
    const destSsh = join(root, 'dest-ssh');
    for (const dir of [destFile, destGit, destSsh]) mkdirSync(dir, { recursive: true });
    const daemon: GitDaemon = await startGitDaemon(destGit);
    stops.push(() => daemon.stop());
    const sshd: Sshd = await startSshd(join(root, 'ssh'));
    stops.push(() => sshd.stop());

    const projects = ['apps/web', 'tools'];
    for (const project of projects) {
      const source = initBare(join(base, `${project}.git`));
      const work = makeWorkTree(join(root, 'work', project), 2);
      git(work, ['checkout', '-q', '-b', 'feature']);
      commitFile(work, 'feature.txt', 'feature\n');
      git(work, ['tag', 'v1']);
      git(work, ['push', '-q', source, 'main', 'feature', 'v1']);
      // The git:// destination cannot be created remotely: it must exist.
      initBare(join(destGit, `${project}.git`));
    }
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "file"]',
      `  url = file://${destFile}/\${name}.git`,
      '  replicationDelay = 0',
      '[remote "daemon"]',
      `  url = ${daemon.url('${name}.git')}`,
      '  push = +refs/heads/*:refs/heads/*',
      '  replicationDelay = 0',
      '[remote "ssh"]',
      `  url = ${sshd.url(`${destSsh}/\${name}.git`)}`,
      '  push = refs/tags/*:refs/tags/*',
      '  push = refs/heads/main:refs/heads/main',
      '  replicationDelay = 0',
    ]);
    for (const project of projects) {
      const out = execFileSync(
        process.execPath,
        [
          join(process.cwd(), 'bin/refrelay.js'),
          'enqueue',
          '--config',
          config,
          '--project',
          project,
          '--ref',
          'refs/heads/main',
          '--ref',
          'refs/heads/feature',
          '--ref',
          'refs/tags/v1',
        ],
        { encoding: 'utf8' },
      );
      expect(out).toBe(`refrelay: queued 3 tasks for ${project}\n`);
    }

    const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true, env: { GIT_SSH_COMMAND: sshd.sshCommand } });
    stops.push(() => node.stop());
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);

    for (const project of projects) {
      const source = refsOf(join(base, `${project}.git`));
      expect(refsOf(join(destFile, `${project}.git`))).toEqual(source);
      expect(lsRemote(daemon.url(`${project}.git`))).toEqual(new Map([...source].filter(([ref]) => ref.startsWith('refs/heads/'))));
      expect(lsRemote(sshd.url(`${destSsh}/${project}.git`), { GIT_SSH_COMMAND: sshd.sshCommand })).toEqual(
        new Map([...source].filter(([ref]) => ref.startsWith('refs/tags/') || ref === 'refs/heads/main')),
      );
    }
    const store = new TaskStore({ root: join(root, 'store'), nodeId: 'check' });
    expect(await store.listWaitingNames()).toEqual([]);
    expect(await store.listRunning()).toEqual([]);
    expect(await store.listFailed()).toEqual([]);
  });
});
