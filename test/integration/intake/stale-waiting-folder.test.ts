import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { encodeTask, taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { appSource, initBare, refsOf, writeHook } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** Source `app`, a `file://` destination `dr/app.git` pushed to at once, and the config. */
function setup(remoteLines: string[] = []): { root: string; store: string; source: string; dest: string; config: string } {
  const root = tempDir('refrelay-stale-view');
  const { store, base, source } = appSource(root);
  const dest = initBare(join(root, 'dr', 'app.git'));
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 0',
    '[remote "dr"]',
    `  url = file://${join(root, 'dr')}/\${name}.git`,
    '  replicationDelay = 0',
    ...remoteLines,
  ]);
  return { root, store, source, dest, config };
}

/**
 * DESIGN.md "Waiting folders", Stale lookups. On NFS, a client that looked up
 * `waiting/<uriKey>/` before another machine claimed it goes on resolving the name to the claimed
 * folder for a while: the hook of a hot branch then finds its task's name taken by the claimed
 * task (pushed with the refs of before this update) and, before this was handled, reported the
 * update queued while nothing waited for it. This machine has no NFS client, so the test builds
 * what that client sees at the path: the folder holding the lease's owner record, fresh, and the
 * claimed task.
 */
describe('a hook on a client that still sees the folder a claim took', () => {
  it('queues the update at the top of waiting/, and a node pushes it once the folder is gone', async () => {
    const { store, source, dest, config } = setup();
    await new TaskStore({ root: store, nodeId: 'test' }).open();
    const task: Task = { project: 'app', refs: ['refs/heads/main'], uri: `file://${dest}`, remote: 'dr' };
    const seen = storeDir(store, 'waiting', uriKey(task.uri));
    mkdirSync(seen);
    writeFileSync(join(seen, `${taskKey(task)}.json`), encodeTask(task));
    writeFileSync(join(seen, 'owner.json'), `${JSON.stringify({ version: 1, nodeId: 'node-b', leaseId: 'node-b.k3x9', counter: 4, uri: task.uri })}\n`);

    const enqueued = runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']);

    expect(enqueued).toMatchObject({ status: 0, stdout: 'refrelay: queued 1 task for app\n', stderr: '' });
    expect(readFileSync(storeDir(store, 'waiting', `${taskKey(task)}.json`), 'utf8')).toBe(encodeTask(task));

    // The claim's push ended and the sweep removed its folder: the name resolves afresh, to nothing.
    rmSync(seen, { recursive: true });
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    stops.push(() => node.stop());

    await waitUntil('main on the destination', () => refsOf(dest).get('refs/heads/main') === refsOf(source).get('refs/heads/main'));
    await waitUntil('waiting/ empty', () => namesIn(storeDir(store, 'waiting')).length === 0);
    expect(node.problems()).toEqual([]);
  });

  it('a node whose failed push puts its task back through that name sends it to the top of waiting/, says so, and pushes it later', async () => {
    const { root, store, source, dest, config } = setup(['  timeout = 2s', '  replicationRetry = 1s']);
    // The first push hangs in the destination's hook until the push's idle limit stops it.
    writeHook(dest, 'pre-receive', `#!/bin/sh\nif [ ! -f "${root}/hung-once" ]; then touch "${root}/hung-once"; sleep 60; fi\nexit 0\n`);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).stdout).toBe('refrelay: queued 1 task for app\n');
    const task: Task = { project: 'app', refs: ['refs/heads/main'], uri: `file://${dest}`, remote: 'dr' };
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    stops.push(() => node.stop());
    await node.waitForLog((line) => line.msg === 'claimed', 10_000);
    // While it pushes, the name of the folder it claimed shows that claim here: its own lease.
    const lease = await waitUntil('the lease folder', () => namesIn(storeDir(store, 'running', uriKey(task.uri))).find((name) => !name.startsWith('.')));
    const seen = storeDir(store, 'waiting', uriKey(task.uri));
    mkdirSync(seen);
    writeFileSync(join(seen, 'owner.json'), `${JSON.stringify({ version: 1, nodeId: 'node-1', leaseId: lease })}\n`);

    const warned = await node.waitForLog((line) => line.msg.startsWith('this client still sees a waiting folder a claim took'), 10_000);

    expect(warned).toMatchObject({ level: 40, folder: seen, movedTo: storeDir(store, 'waiting', `${taskKey(task)}.json`) });
    expect(readFileSync(storeDir(store, 'waiting', `${taskKey(task)}.json`), 'utf8')).toBe(encodeTask(task));
    rmSync(seen, { recursive: true });
    await waitUntil('main on the destination', () => refsOf(dest).get('refs/heads/main') === refsOf(source).get('refs/heads/main'), 20_000);
    await waitUntil('waiting/ empty', () => namesIn(storeDir(store, 'waiting')).length === 0);
    expect(node.problems()).toEqual([]);
  });
});
