import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { makeRecordingDestination, pushesReceived } from '../../support/destination.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

describe('consolidated pushes', () => {
  it('500 updates to 5 projects within one replicationDelay become exactly 5 pushes per destination URL', async () => {
    const root = tempDir('refrelay-consolidate');
    const base = join(root, 'base');
    const projects = ['p0', 'p1', 'p2', 'p3', 'p4'];
    const destinations = ['east', 'west'];
    for (const project of projects) {
      const source = initBare(join(base, `${project}.git`));
      const work = makeWorkTree(join(root, 'work', project), 1);
      // 100 branches per project: each is one queued update.
      for (let b = 0; b < 100; b++) git(work, ['branch', `b${b}`]);
      git(work, ['push', '-q', source, '--all']);
      for (const dest of destinations) makeRecordingDestination(join(root, dest, `${project}.git`));
    }
    mkdirSync(join(root, 'store'), { recursive: true });
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 200ms',
      '[remote "mirrors"]',
      ...destinations.map((dest) => `  url = ${join(root, dest)}/\${name}.git`),
      '  replicationDelay = 3s',
    ]);

    // One task per (update, URL): 500 updates × 2 URLs, all queued well within replicationDelay.
    const store = new TaskStore({ root: join(root, 'store'), nodeId: 'hook' });
    for (const project of projects) {
      for (let b = 0; b < 100; b++) {
        for (const dest of destinations) {
          await store.create({ project, refs: [`refs/heads/b${b}`], uri: `${join(root, dest)}/${project}.git`, remote: 'mirrors' });
        }
      }
    }
    expect(await store.listWaitingNames()).toHaveLength(1000);

    const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true });
    nodes.push(node);
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);

    for (const project of projects) {
      const expected = new Map([...refsOf(join(base, `${project}.git`))].filter(([ref]) => ref !== 'refs/heads/main'));
      for (const dest of destinations) {
        const path = join(root, dest, `${project}.git`);
        expect(pushesReceived(path), `${dest}/${project}`).toBe(1);
        expect(refsOf(path)).toEqual(expected);
      }
    }
    const pushLines = node.logs().filter((line) => line.msg === 'pushed');
    expect(pushLines).toHaveLength(10);
    expect(pushLines.every((line) => line.refs === 100)).toBe(true);
  });
});
