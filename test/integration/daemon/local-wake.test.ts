import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { runCli } from '../../support/cli.js';
import { appSource, initBare, refsOf } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, waitingTaskNames, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/**
 * A node whose periodic pass is ten minutes away, each remote `NAME` pushing to `<root>/NAME/`
 * with the replicationDelay given: only a wake-up brings a pass sooner.
 */
function quietConfig(root: string, store: string, base: string, replicationDelays: Record<string, string>): string {
  return writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 600',
    // The pass loop also wakes every lockStale / 6: 100 s here.
    '  lockStale = 600',
    '  randomDelay = 0',
    ...Object.entries(replicationDelays).flatMap(([name, delay]) => [
      `[remote "${name}"]`,
      `  url = file://${join(root, name)}/\${name}.git`,
      `  replicationDelay = ${delay}`,
    ]),
  ]);
}

describe('the local wake-up of a running node', () => {
  it('tasks `refrelay retry` puts back are pushed at once, not at the next listing minutes later', async () => {
    const root = tempDir('refrelay-local-wake');
    const { store, base, source } = appSource(root);
    const dest = initBare(join(root, 'dr', 'app.git'));
    const uri = `file://${dest}`;
    const config = quietConfig(root, store, base, { dr: '0' });
    // Both tasks are an hour old, so due as soon as a pass sees them: main waiting, feature failed.
    const hourAgo = new Date(Date.now() - 3_600_000);
    const tasks = new TaskStore({ root: store, nodeId: 'test' });
    await tasks.createMany([{ project: 'app', refs: ['refs/heads/main'], uri, remote: 'dr' }], { mtimeOf: () => hourAgo });
    const parked = await tasks.parkFailed({ project: 'app', refs: ['refs/heads/feature'], uri, remote: 'dr' }, { reason: 'refused by the test' });
    utimesSync(storeDir(store, 'failed', parked.uriKey, parked.name), hourAgo, hourAgo);

    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    stops.push(() => node.stop());
    // The start-up pass pushed main; the next listing is minutes away.
    await node.waitForLog((line) => line.msg === 'pushed');
    expect([...refsOf(dest).keys()]).toEqual(['refs/heads/main']);

    const retried = runCli(['retry', '--config', config, '--all']);
    expect(retried).toMatchObject({ status: 0, stdout: 'moved 1 failed task back to waiting\n', stderr: '' });
    await waitUntil('feature on the destination', () => refsOf(dest).has('refs/heads/feature'), 10_000);
    expect(refsOf(dest)).toEqual(refsOf(source));
    await waitUntil('waiting/ empty', () => waitingTaskNames(store).length === 0);
    expect(namesIn(storeDir(store, 'building'))).toEqual([]);
    expect(node.problems()).toEqual([]);
  });

  it('reads waiting/ at once on the wake-up, though a change it did not see made waits a batching window: a retried task of a URI it never saw', async () => {
    const root = tempDir('refrelay-local-wake');
    const { store, base, source } = appSource(root);
    const dest = initBare(join(root, 'dr', 'app.git'));
    const later = initBare(join(root, 'later', 'app.git'));
    // A change made elsewhere is read once the last read is 15 min − 10 min old (DESIGN.md
    // "Waiting folders", Learn); what this machine writes is read at the next listing.
    const config = quietConfig(root, store, base, { dr: '15m', later: '15m' });
    // Both tasks are an hour old, so due as soon as a pass sees them: main waiting for dr, feature failed for later.
    const hourAgo = new Date(Date.now() - 3_600_000);
    const tasks = new TaskStore({ root: store, nodeId: 'test' });
    await tasks.createMany([{ project: 'app', refs: ['refs/heads/main'], uri: `file://${dest}`, remote: 'dr' }], { mtimeOf: () => hourAgo });
    const parked = await tasks.parkFailed(
      { project: 'app', refs: ['refs/heads/feature'], uri: `file://${later}`, remote: 'later' },
      { reason: 'refused by the test' },
    );
    utimesSync(storeDir(store, 'failed', parked.uriKey, parked.name), hourAgo, hourAgo);

    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    stops.push(() => node.stop());
    await node.waitForLog((line) => line.msg === 'pushed');
    expect([...refsOf(dest).keys()]).toEqual(['refs/heads/main']);

    expect(runCli(['retry', '--config', config, '--all'])).toMatchObject({ status: 0, stdout: 'moved 1 failed task back to waiting\n' });
    await waitUntil('feature on the later destination', () => refsOf(later).has('refs/heads/feature'), 10_000);
    expect(refsOf(later).get('refs/heads/feature')).toBe(refsOf(source).get('refs/heads/feature'));
    await waitUntil('waiting/ empty', () => waitingTaskNames(store).length === 0);
    expect(node.problems()).toEqual([]);
  });
});
