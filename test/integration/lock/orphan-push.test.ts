import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { uriKey } from '../../../src/task/task.js';
import { makeRecordingDestination, overlapsSeen, pushesReceived } from '../../support/destination.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, waitingTaskNames, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
const daemons: GitDaemon[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  for (const daemon of daemons.splice(0)) await daemon.stop();
});

/** The owner record of a URI lock (it sits in the lease folder), once it names the push's process. */
function ownerWithPushPid(store: string, lockName: string): Record<string, unknown> | undefined {
  const dir = storeDir(store, 'running', lockName);
  for (const name of namesIn(dir)) {
    const file = join(dir, name, 'owner.json');
    if (!existsSync(file)) continue;
    try {
      const owner = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      if (typeof owner.pushPid === 'number') return owner;
    } catch {
      // being replaced right now
    }
  }
  return undefined;
}

describe('a node killed in the middle of a push over the network, restarted at once', () => {
  it('lets the orphaned git push end before pushing the URI again: the destination never sees two pushes at once (git daemon)', async () => {
    const root = tempDir('refrelay-orphan');
    const base = join(root, 'base');
    const source = initBare(join(base, 'app.git'));
    const work = makeWorkTree(join(root, 'work'), 2);
    git(work, ['push', '-q', source, 'main', 'main:refs/heads/second']);
    const destBase = join(root, 'dest');
    // The destination's side of a push outlives a killed client: its hook runs on under git daemon.
    const dest = makeRecordingDestination(join(destBase, 'app.git'), { sleepSeconds: 2 });
    const daemon = await startGitDaemon(destBase);
    daemons.push(daemon);
    const uri = daemon.url('app.git');
    const store = join(root, 'store');
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 0',
      '  lockStale = 10s',
      '  httpListen = off',
      '[remote "mirror"]',
      `  url = ${daemon.url('${name}.git')}`,
      '  push = +refs/heads/*:refs/heads/*',
      '  replicationDelay = 0',
      '  replicationRetry = 1s',
    ]);
    await new TaskStore({ root: store, nodeId: 'hook' }).create({ project: 'app', refs: ['refs/heads/main', 'refs/heads/second'], uri, remote: 'mirror' });

    const first = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(first);
    const owner = await waitUntil('the push to run, its process recorded in the owner record', () => ownerWithPushPid(store, uriKey(uri)), 10_000);
    // Recorded with what proves it is that push later: without them the restarted node would not wait for it.
    expect(owner).toMatchObject({ pushStartTime: expect.any(Number), bootId: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() });
    await waitUntil('the destination hook to run', () => existsSync(join(dest, 'push-in-progress')), 10_000);
    first.signal('SIGKILL');
    await first.exited;

    const again = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(again);
    await again.waitForLog((line) => line.msg === 'recovered own earlier claim', 10_000);
    await waitUntil('the queue to drain', () => waitingTaskNames(store).length === 0 && readdirSync(storeDir(store, 'running')).length === 0, 15_000);

    expect(refsOf(dest)).toEqual(refsOf(source));
    expect(overlapsSeen(dest)).toBe(0);
    // The orphan's push landed; the recovered claim found the destination up to date.
    expect(pushesReceived(dest)).toBe(1);
    expect(again.logs().some((line) => line.msg === "waiting for the former holder's git push to end")).toBe(true);
    expect(again.problems()).toEqual([]);
  });
});
