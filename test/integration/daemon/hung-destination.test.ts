import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { processesWith } from '../../support/processes.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { startSshd, sshdAvailable } from '../../support/sshd.js';
import { namesIn, readUriStateFile, waitingTaskNames, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

describe.skipIf(!sshdAvailable)('a destination that accepts the connection and then hangs', () => {
  it('the push is abandoned after remote.timeout without progress: logged as a timeout, tasks back in waiting/ with attempts = 1, and no ssh client left running', async () => {
    const root = tempDir('refrelay-hung');
    const store = join(root, 'store');
    const base = join(root, 'base');
    const source = initBare(join(base, 'app.git'));
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', source, 'main']);
    const destDir = join(root, 'dest');
    initBare(join(destDir, 'app.git'));
    // The key is only good for `sleep 600`: git-receive-pack never answers.
    const sshd = await startSshd(join(root, 'ssh'), { forcedCommand: 'sleep 600' });
    stops.push(() => sshd.stop());
    const uri = sshd.url(`${destDir}/app.git`);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "hung"]',
      `  url = ${sshd.url(`${destDir}/\${name}.git`)}`,
      '  replicationDelay = 0',
      '  timeout = 2s',
      // Far enough that the test sees exactly one attempt.
      '  replicationRetry = 10m',
    ]);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).stdout).toBe('refrelay: queued 1 task for app\n');
    const queued = waitingTaskNames(store);
    expect(queued).toHaveLength(1);

    const node = RefrelayNode.start({ config, nodeId: 'node-1', env: { GIT_SSH_COMMAND: sshd.sshCommand } });
    stops.push(() => node.stop());
    const claimed = await node.waitForLog((line) => line.msg === 'claimed', 10_000);
    // While the push hangs, its ssh client is ours and alive.
    const clients = await waitUntil(
      'the ssh client',
      () => {
        const found = processesWith(sshd.clientKey);
        return found.length > 0 ? found : undefined;
      },
      5000,
    );
    expect(clients[0]!.args).toContain(`ssh -F /dev/null -i ${sshd.clientKey}`);
    const failed = await node.waitForLog((line) => line.msg === 'push failed', 10_000);
    expect(failed.failure).toBe('no progress for 2 s (remote.hung.timeout); git and the processes it started (ssh) were stopped');
    const elapsed = Date.parse(String(failed.time)) - Date.parse(String(claimed.time));
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(5000);
    expect(processesWith(sshd.clientKey)).toEqual([]);

    const retry = await node.waitForLog((line) => line.msg === 'retry scheduled', 5000);
    expect(retry).toMatchObject({ attempts: 1 });
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);
    expect(node.logs().filter((line) => line.msg === 'push failed')).toHaveLength(1);

    expect(waitingTaskNames(store)).toEqual(queued);
    expect(namesIn(storeDir(store, 'running'))).toEqual([]);
    expect(namesIn(storeDir(store, 'failed'))).toEqual([]);
    const state = readUriStateFile(store, uriKey(uri));
    expect(state).toMatchObject({
      uri,
      attempts: 1,
      lastError: 'no progress for 2 s (remote.hung.timeout); git and the processes it started (ssh) were stopped',
      nodeId: 'node-1',
    });
    expect(state!.notBefore as number).toBeGreaterThan(Date.now());
    expect(refsOf(join(destDir, 'app.git'))).toEqual(new Map());
    expect(processesWith(sshd.clientKey)).toEqual([]);
  });
});
