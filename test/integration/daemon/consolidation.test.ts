import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { makeRecordingDestination, pushesReceived } from '../../support/destination.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { namesIn, waitingTaskNames, waitUntil } from '../../support/store-files.js';
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
    // A finished claim folder a crashed node left in done/: swept by whichever node starts.
    const leftover = join(root, 'store', 'ref-updates', 'done', `${'a'.repeat(40)}.crashed-node.0a1b2c`);
    mkdirSync(leftover, { recursive: true });
    writeFileSync(join(leftover, `${'b'.repeat(40)}.json`), '{}');

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
    // Each push retired its claim folder into done/ in one rename; the drained node leaves none.
    for (const folder of ['waiting', 'running', 'done']) expect(namesIn(join(root, 'store', 'ref-updates', folder)), folder).toEqual([]);
  });

  it('when done/ cannot take the claim folder (another filesystem) each push deletes its files one by one instead, with a warning, and nothing is lost', async (context) => {
    const elsewhere = existsSync('/dev/shm') ? mkdtempSync('/dev/shm/refrelay-done-') : undefined;
    if (elsewhere === undefined || statSync(elsewhere).dev === statSync(tempDir('refrelay-probe')).dev) {
      if (elsewhere !== undefined) rmSync(elsewhere, { recursive: true, force: true });
      context.skip(); // needs a second filesystem to make the rename fail with EXDEV
      return;
    }
    try {
      const { root, storePath, config } = oneProject(tempDir('refrelay-done-elsewhere'), 5, ['dest'], '0');
      const dest = join(root, 'dest', 'p.git');
      // An operator's choice of where done/ lives: the store's own folder replaced by a link.
      rmSync(join(storePath, 'ref-updates', 'done'), { recursive: true, force: true });
      symlinkSync(elsewhere, join(storePath, 'ref-updates', 'done'));
      await queueBranches(storePath, root, 5, ['dest']);

      const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true });
      nodes.push(node);
      expect(await node.exited).toEqual({ code: 0, signal: null });

      expect([...refsOf(dest).keys()].sort()).toEqual(['refs/heads/b0', 'refs/heads/b1', 'refs/heads/b2', 'refs/heads/b3', 'refs/heads/b4']);
      const warning = node.logs().find((line) => line.msg === 'could not move the finished claim folder aside; deleting its files one by one');
      expect(String(warning?.err)).toMatch(/EXDEV/);
      for (const folder of ['waiting', 'running']) expect(namesIn(join(storePath, 'ref-updates', folder)), folder).toEqual([]);
      expect(namesIn(elsewhere)).toEqual([]);
      expect(node.problems()).toEqual([]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a running node deletes the finished claim folders in done/ once it is idle, without stopping', async () => {
    const names = ['one', 'two', 'three'];
    const { root, storePath, config } = oneProject(tempDir('refrelay-done-sweep'), 20, names, '500ms');
    const dests = names.map((name) => join(root, name, 'p.git'));
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg === 'refrelay node started' || line.msg === 'refrelay node starting');
    const store = new TaskStore({ root: storePath, nodeId: 'hook' });
    await store.listWaiting(); // makes the layout, done/ included
    const retired = new Set<string>();
    const watcher = watch(join(storePath, 'ref-updates', 'done'), (_event, name) => name && retired.add(name));
    await queueBranches(storePath, root, 20, names);

    // Usually one push per destination; on a loaded machine the queueing can outlast
    // replicationDelay and a destination gets a second push. Either way every ref arrives.
    const delivered = (): boolean =>
      dests.every((dest) => refsOf(dest).size === 20) &&
      waitingTaskNames(storePath).length === 0 &&
      namesIn(join(storePath, 'ref-updates', 'running')).length === 0;
    await waitUntil('every ref delivered', delivered, 30_000);
    // A push's refs land before its job logs it and retires its claim folder.
    const pushed = (): unknown[] => node.logs().filter((line) => line.msg === 'pushed');
    await waitUntil('a push logged for every destination', () => new Set(pushed().map((line) => (line as { uri: string }).uri)).size === names.length, 30_000);
    const ownRetired = (): string[] => [...retired].filter((name) => /^[0-9a-f]{40}\.node-1\./.test(name));
    await waitUntil(
      'every claim folder retired to done/, and done/ swept',
      () => ownRetired().length >= pushed().length && namesIn(join(storePath, 'ref-updates', 'done')).length === 0,
      30_000,
    );
    watcher.close();

    // Each push moved its claim folder (lease, owner record, task files) there in one rename.
    const pushes = pushed().length;
    expect(pushes).toBeGreaterThanOrEqual(3);
    expect(ownRetired()).toHaveLength(pushes);
    expect(node.logs().filter((line) => line.level >= 40)).toEqual([]);
    expect(node.child.exitCode).toBeNull();
    expect(waitingTaskNames(storePath)).toEqual([]);
    expect(namesIn(join(storePath, 'ref-updates', 'running'))).toEqual([]);
    for (const dest of dests) expect([...refsOf(dest).keys()].sort()).toEqual(Array.from({ length: 20 }, (_, b) => `refs/heads/b${b}`).sort());
    expect(node.problems()).toEqual([]);
  });
});

/** Project `p` with `branches` branches b0…, one recording destination per name, one remote `mirrors` with a URL for each. */
function oneProject(root: string, branches: number, destinations: string[], replicationDelay: string): { root: string; storePath: string; config: string } {
  const base = join(root, 'base');
  const source = initBare(join(base, 'p.git'));
  const work = makeWorkTree(join(root, 'work'), 1);
  for (let b = 0; b < branches; b++) git(work, ['branch', `b${b}`]);
  git(work, ['push', '-q', source, '--all']);
  for (const name of destinations) makeRecordingDestination(join(root, name, 'p.git'));
  const storePath = join(root, 'store');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${storePath}`,
    `  basePath = ${base}`,
    '  distributionInterval = 100ms',
    '  randomDelay = 0',
    '[remote "mirrors"]',
    ...destinations.map((name) => `  url = ${join(root, name)}/\${name}.git`),
    `  replicationDelay = ${replicationDelay}`,
  ]);
  return { root, storePath, config };
}

/** One task per branch and destination, as the hook would queue them. */
async function queueBranches(storePath: string, root: string, branches: number, destinations: string[]): Promise<void> {
  const store = new TaskStore({ root: storePath, nodeId: 'hook' });
  for (let b = 0; b < branches; b++) {
    for (const name of destinations) await store.create({ project: 'p', refs: [`refs/heads/b${b}`], uri: `${join(root, name)}/p.git`, remote: 'mirrors' });
  }
}
