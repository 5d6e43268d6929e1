import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { makeRecordingDestination, overlapsSeen, pushesReceived } from '../../support/destination.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { projectsCoveringNodes } from '../../support/preferred-projects.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

async function runCluster(nodeCount: number): Promise<void> {
  const root = tempDir(`refrelay-cluster${nodeCount}`);
  const base = join(root, 'base');
  const nodeIds = Array.from({ length: nodeCount }, (_, i) => `node-${i + 1}`);
  const uri = (project: string): string => `${join(root, 'dest')}/${project}.git`;
  // Each node is the preferred node of one URI at least, so each is offered work first.
  const projects = projectsCoveringNodes(nodeIds, uri, 12, 'team/p');
  const store = new TaskStore({ root: join(root, 'store'), nodeId: 'hook' });
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${base}`,
    '  distributionInterval = 150ms',
    '  randomDelay = 300ms',
    '[remote "mirror"]',
    `  url = ${join(root, 'dest')}/\${name}.git`,
    '  replicationDelay = 0',
    '  threads = 2',
  ]);
  const works = new Map<string, string>();
  for (const project of projects) {
    const source = initBare(join(base, `${project}.git`));
    const work = makeWorkTree(join(root, 'work', project), 1);
    git(work, ['push', '-q', source, 'main']);
    works.set(project, work);
    // A slow destination that notices two pushes to one repository at the same time.
    makeRecordingDestination(join(root, 'dest', `${project}.git`), { sleepSeconds: 0.3 });
  }
  for (const project of projects) await store.create({ project, refs: ['refs/heads/main'], uri: uri(project), remote: 'mirror' });

  for (const nodeId of nodeIds) nodes.push(RefrelayNode.start({ config, nodeId }));
  // While the cluster works (a node has claimed a first batch), more updates arrive for the same
  // URIs: they must land too, without overlap.
  await waitUntil('a node to claim work', () => nodes.some((node) => node.logs().some((line) => line.msg === 'claimed')), 15_000);
  for (const project of projects) {
    const work = works.get(project)!;
    git(work, ['commit', '-q', '--allow-empty', '-m', 'second']);
    git(work, ['push', '-q', join(base, `${project}.git`), 'main', 'main:refs/heads/second']);
    await store.create({ project, refs: ['refs/heads/main', 'refs/heads/second'], uri: uri(project), remote: 'mirror' });
  }
  const deadline = Date.now() + 60_000;
  while ((await store.listWaitingNames()).length > 0 || (await store.listRunning()).length > 0) {
    if (Date.now() > deadline) throw new Error('cluster did not drain within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const node of nodes) node.signal('SIGTERM');
  for (const node of nodes) expect((await node.exited).code).toBe(0);

  let totalPushes = 0;
  for (const project of projects) {
    const dest = join(root, 'dest', `${project}.git`);
    expect(refsOf(dest), project).toEqual(refsOf(join(base, `${project}.git`)));
    expect(overlapsSeen(dest), project).toBe(0);
    totalPushes += pushesReceived(dest);
  }
  const perNode = nodes.map((node) => node.logs().filter((line) => line.msg === 'pushed').length);
  expect(perNode.reduce((a, b) => a + b, 0)).toBe(totalPushes);
  // Work spreads: every node pushed something.
  for (const count of perNode) expect(count).toBeGreaterThan(0);
  for (const node of nodes) expect(node.problems()).toEqual([]);
}

describe('several nodes on one store', () => {
  it('two daemons deliver every ref with zero overlapping pushes to one repository, and both push', async () => {
    await runCluster(2);
  });

  it('three daemons deliver every ref with zero overlapping pushes to one repository, and all push', async () => {
    await runCluster(3);
  });
});
