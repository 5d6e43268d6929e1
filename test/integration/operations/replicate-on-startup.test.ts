import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('replicateOnStartup', () => {
  it('the first daemon of the cluster queues a full sync of every project; a node joining a running cluster does not', async () => {
    const root = tempDir('refrelay-startup-sync');
    const work = makeWorkTree(join(root, 'work'), 2);
    git(work, ['tag', 'v1']);
    const projects = ['a', 'team/b'];
    for (const project of projects) git(work, ['push', '-q', initBare(join(root, 'base', `${project}.git`)), 'main', 'v1']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[gerrit]',
      '  replicateOnStartup = true',
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
      '  replicationDelay = 0',
    ]);
    const first = RefrelayNode.start({ config, nodeId: 'n1' });
    const second = { node: undefined as RefrelayNode | undefined };
    try {
      expect(await first.waitForLog((line) => line.msg === 'replicateOnStartup: first node of the cluster queued a full sync')).toMatchObject({
        projects: 2,
        tasks: 2,
      });
      for (const deadline = Date.now() + 15_000; first.logs().filter((line) => line.msg === 'pushed').length < 2;) {
        if (Date.now() > deadline) throw new Error('the full sync was not pushed within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      for (const project of projects) expect(refsOf(join(root, 'dr', `${project}.git`))).toEqual(refsOf(join(root, 'base', `${project}.git`)));

      second.node = RefrelayNode.start({ config, nodeId: 'n2' });
      expect(await second.node.waitForLog((line) => String(line.msg).startsWith('replicateOnStartup:'))).toMatchObject({
        msg: 'replicateOnStartup: another node is running; not queueing a full sync',
        aliveNodes: 1,
      });
    } finally {
      first.signal('SIGTERM');
      second.node?.signal('SIGTERM');
      await first.exited;
      await second.node?.exited;
    }
  });
});
