import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { makeRecordingDestination, pushesReceived } from '../../support/destination.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { readJson, RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

/** The node heartbeat counter in `nodes/<nodeId>.json`: it moves once per loop pass (every distributionInterval). */
function nodeCounter(root: string, nodeId: string): number {
  return readJson<{ counter: number }>(join(root, 'store', 'nodes', `${nodeId}.json`)).counter;
}

function lines(root: string, options: { autoReload: boolean; fresh?: boolean; freshThreads?: string }): string[] {
  return [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${join(root, 'base')}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    `  autoReload = ${options.autoReload}`,
    '[remote "slow"]',
    `  url = ${join(root, 'slow')}/\${name}.git`,
    '  replicationDelay = 0',
    ...(options.fresh
      ? ['[remote "fresh"]', `  url = ${join(root, 'fresh')}/\${name}.git`, '  replicationDelay = 0', `  threads = ${options.freshThreads ?? '1'}`]
      : []),
  ];
}

describe('live config reload', () => {
  it('during a slow push: the push completes, a new remote starts, an invalid edit is refused and the old config stays', async () => {
    const root = tempDir('refrelay-reload');
    const source = initBare(join(root, 'base', 'app.git'));
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', source, 'main']);
    makeRecordingDestination(join(root, 'slow', 'app.git'), { sleepSeconds: 2 });
    const config = writeConfig(join(root, 'replication.config'), lines(root, { autoReload: true }));
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
      await node.waitForLog((line) => line.msg === 'claimed');

      writeConfig(config, lines(root, { autoReload: true, fresh: true }));
      const reloaded = await node.waitForLog((line) => line.msg === 'config reloaded');
      expect(reloaded).toMatchObject({ reason: 'config file changed', added: ['fresh'], removed: [] });
      const slowPush = await node.waitForLog((line) => line.msg === 'pushed' && line.remote === 'slow', 10_000);
      expect(slowPush.result).toBe('ok');
      expect(pushesReceived(join(root, 'slow', 'app.git'))).toBe(1);

      expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--remote', 'fresh']).stdout).toBe(
        'refrelay: queued 1 task for app\n',
      );
      await node.waitForLog((line) => line.msg === 'pushed' && line.remote === 'fresh', 10_000);
      expect(refsOf(join(root, 'fresh', 'app.git'))).toEqual(refsOf(source));

      writeConfig(config, lines(root, { autoReload: true, fresh: true, freshThreads: 'many' }));
      const refused = await node.waitForLog((line) => line.msg === 'config reload refused: the file is invalid; the previous config stays in force');
      expect(refused.problems).toEqual([`${config}: remote.fresh.threads: expected a whole number ≥ 1, got "many"`]);
      // The old config is still in force: a new update to "fresh" is delivered.
      git(work, ['commit', '-q', '--allow-empty', '-m', 'after the bad edit']);
      git(work, ['push', '-q', source, 'main']);
      writeConfig(join(root, 'enqueue.config'), lines(root, { autoReload: false, fresh: true }));
      runCli(['enqueue', '--config', join(root, 'enqueue.config'), '--project', 'app', '--ref', 'refs/heads/main', '--remote', 'fresh']);
      await node.waitForLog(
        (line) => line.msg === 'pushed' && line.remote === 'fresh' && node.logs().filter((l) => l.msg === 'pushed' && l.remote === 'fresh').length >= 2,
        10_000,
      );
      expect(refsOf(join(root, 'fresh', 'app.git'))).toEqual(refsOf(source));
    } finally {
      node.signal('SIGTERM');
      expect((await node.exited).code).toBe(0);
    }
    expect(node.logs().filter((line) => line.level >= 50 && !String(line.msg).startsWith('config reload refused'))).toEqual([]);
  });

  it('SIGHUP reloads even without autoReload; a removed remote stops being scheduled', async () => {
    const root = tempDir('refrelay-sighup');
    const source = initBare(join(root, 'base', 'app.git'));
    git(makeWorkTree(join(root, 'work'), 1), ['push', '-q', source, 'main']);
    const config = writeConfig(join(root, 'replication.config'), lines(root, { autoReload: false, fresh: true }));
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      // Logged once the daemon runs, after the SIGHUP handler is installed.
      await node.waitForLog((line) => line.msg === 'refrelay node starting');
      writeConfig(config, lines(root, { autoReload: false }));
      node.signal('SIGHUP');
      expect(await node.waitForLog((line) => line.msg === 'config reloaded')).toMatchObject({ reason: 'SIGHUP', added: [], removed: ['fresh'] });
      // A task for the removed remote (queued by a peer that still has it) is left for others.
      writeConfig(join(root, 'peer.config'), lines(root, { autoReload: false, fresh: true }));
      runCli(['enqueue', '--config', join(root, 'peer.config'), '--project', 'app', '--ref', 'refs/heads/main']);
      await node.waitForLog((line) => line.msg === 'pushed' && line.remote === 'slow', 10_000);
      // Three more loop passes (one node heartbeat each), every one of which would have started
      // the task for "fresh" (due at once) if the node still scheduled that remote.
      const beats = nodeCounter(root, 'n1');
      await waitUntil('three more passes of the node', () => nodeCounter(root, 'n1') >= beats + 3, 10_000);
      expect(node.logs().filter((line) => line.msg === 'claimed' && String(line.uri).startsWith(join(root, 'fresh')))).toEqual([]);
      expect(node.logs().filter((line) => line.msg === 'pushed' && line.remote === 'fresh')).toEqual([]);
      const status = JSON.parse(runCli(['status', '--json', '--config', join(root, 'peer.config')]).stdout) as {
        remotes: Array<{ name: string; waiting: number }>;
      };
      expect(status.remotes.find((remote) => remote.name === 'fresh')?.waiting).toBe(1);
    } finally {
      node.signal('SIGTERM');
      await node.exited;
    }
  });
});
