import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF_CAP_MS } from '../../../src/schedule/backoff.js';
import { uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { freePort } from '../../support/free-port.js';
import { startGitDaemon } from '../../support/git-daemon.js';
import { appSource, gitEnv, initBare, refsOf } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig, type LogLine } from '../../support/refrelay-node.js';
import { namesIn, readUriStateFile, taskFilesIn, waitUntil, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

function lsRemote(url: string): Map<string, string> {
  const out = execFileSync('git', ['ls-remote', url], { env: gitEnv, encoding: 'utf8' });
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'))
      .filter(([, ref]) => ref!.startsWith('refs/'))
      .map(([oid, ref]) => [ref!, oid!]),
  );
}

interface Setup {
  store: string;
  source: string;
  destBase: string;
  config: string;
  port: number;
  uri: string;
}

/** Source `app` (main, feature); a git:// destination on a port where nothing listens yet. */
async function setup(label: string, remoteSettings: string[]): Promise<Setup> {
  const root = tempDir(label);
  const { store, base, source } = appSource(root);
  const destBase = join(root, 'dest');
  initBare(join(destBase, 'app.git'));
  const port = await freePort();
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    '[remote "dr"]',
    `  url = git://127.0.0.1:${port}/\${name}.git`,
    '  replicationDelay = 0',
    ...remoteSettings.map((line) => `  ${line}`),
  ]);
  return { store, source, destBase, config, port, uri: `git://127.0.0.1:${port}/app.git` };
}

function enqueue(s: Setup, ref: string): void {
  const result = runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', ref]);
  expect(result.stdout).toBe('refrelay: queued 1 task for app\n');
  expect(result.status).toBe(0);
}

function startNode(s: Setup, nodeId: string, drain = false): RefrelayNode {
  const node = RefrelayNode.start({ config: s.config, nodeId, drain });
  stops.push(() => node.stop());
  return node;
}

function timeOf(line: LogLine): number {
  return Date.parse(String(line.time));
}

describe('retries against a destination that is down', () => {
  it('two nodes share one backoff: uri-state holds attempts and notBefore, attempts by either node are spaced by the backoff, and everything lands once the destination is back', async () => {
    const retryMs = 1000;
    const s = await setup('refrelay-backoff', [`replicationRetry = ${retryMs}ms`]);
    enqueue(s, 'refs/heads/main');
    enqueue(s, 'refs/heads/feature');
    const nodes = [startNode(s, 'node-1'), startNode(s, 'node-2')];
    const key = uriKey(s.uri);

    const first = await waitUntil('the first uri-state', () => readUriStateFile(s.store, key));
    expect(first).toMatchObject({ uri: s.uri, attempts: 1, nodeId: expect.stringMatching(/^node-[12]$/) });
    expect(first.lastError).toMatch(/Connection refused|unable to connect/);
    expect(first.notBefore as number).toBeGreaterThanOrEqual((first.updatedAt as number) + 0.75 * retryMs);
    expect(first.notBefore as number).toBeLessThanOrEqual((first.updatedAt as number) + retryMs);
    // While the destination is down the tasks wait; nothing is given up. (The holder writes the
    // retry state before it puts the tasks back into their URI's folder: wait for the move.)
    await waitUntil('both tasks back in waiting/', () => waitingTaskNames(s.store).length === 2, 2000, 5);
    expect(waitingTaskNames(s.store)).toHaveLength(2);
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([]);

    const third = await waitUntil('a third failed attempt', () => {
      const state = readUriStateFile(s.store, key);
      return state !== undefined && (state.attempts as number) >= 3 ? state : undefined;
    });
    expect(third.attempts).toBe(3);
    expect(third.notBefore as number).toBeGreaterThanOrEqual((third.updatedAt as number) + 0.75 * 4 * retryMs);
    const daemon = await startGitDaemon(s.destBase, { port: s.port });
    stops.push(() => daemon.stop());

    await waitUntil('delivery', () => lsRemote(s.uri).get('refs/heads/feature') !== undefined && readUriStateFile(s.store, key) === undefined, 15_000);
    expect(lsRemote(s.uri)).toEqual(refsOf(s.source));
    await waitUntil('an empty queue', () => waitingTaskNames(s.store).length === 0 && namesIn(storeDir(s.store, 'running')).length === 0);
    for (const node of nodes) node.signal('SIGTERM');
    for (const node of nodes) expect(await node.exited).toEqual({ code: 0, signal: null });
    for (const node of nodes) expect(node.problems()).toEqual([]);

    const all = nodes.flatMap((node) => node.logs()).sort((a, b) => timeOf(a) - timeOf(b));
    const failed = all.filter((line) => line.msg === 'push failed');
    const scheduled = all.filter((line) => line.msg === 'retry scheduled');
    const pushed = all.filter((line) => line.msg === 'pushed');
    // One count for the whole cluster: attempt numbers go 1, 2, 3 whichever node failed.
    expect(failed).toHaveLength(3);
    expect(scheduled.map((line) => line.attempts)).toEqual([1, 2, 3]);
    expect(pushed).toHaveLength(1);
    expect(pushed[0]).toMatchObject({ refs: 2, outcomes: { new: 2 }, result: 'ok' });
    // Attempt n+1 (failed or not) comes at least 0.75 × retry·2^(n-1) after attempt n failed.
    const attempts = [...failed, pushed[0]!];
    for (let n = 1; n < attempts.length; n++) {
      const gap = timeOf(attempts[n]!) - timeOf(attempts[n - 1]!);
      expect(gap, `gap after attempt ${n}`).toBeGreaterThanOrEqual(0.75 * retryMs * 2 ** (n - 1));
    }
    expect(waitingTaskNames(s.store)).toEqual([]);
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([]);
    expect(namesIn(join(s.store, 'uri-state')).filter((name) => name.endsWith('.json'))).toEqual([]);
  });

  it('replicationMaxRetries = 2 parks the tasks in failed/ ("gave up after 3 attempts"); refrelay retry brings them back and a drain delivers them', async () => {
    const s = await setup('refrelay-maxretries', ['replicationRetry = 300ms', 'replicationMaxRetries = 2']);
    enqueue(s, 'refs/heads/main');
    enqueue(s, 'refs/heads/feature');
    const key = uriKey(s.uri);

    const first = startNode(s, 'node-1', true);
    expect(await first.exited).toEqual({ code: 1, signal: null });
    expect(first.logs().filter((line) => line.msg === 'push failed')).toHaveLength(3);
    expect(first.logs().find((line) => line.msg === 'task failed: retries exhausted')).toMatchObject({ attempts: 3 });
    expect(first.logs().find((line) => line.msg === 'refrelay node stopped')).toMatchObject({ failedTasks: 2 });
    expect(waitingTaskNames(s.store)).toEqual([]);
    expect(namesIn(storeDir(s.store, 'running'))).toEqual([]);
    expect(readUriStateFile(s.store, key)).toBeUndefined();
    const parked = taskFilesIn(storeDir(s.store, 'failed', key));
    expect(parked).toHaveLength(2);
    for (const name of parked) {
      const reason = JSON.parse(readFileSync(storeDir(s.store, 'failed', key, `${name}.reason.json`), 'utf8'));
      expect(reason.reason).toMatch(/(Connection refused|unable to connect).* \(gave up after 3 attempts\)$/);
      expect(reason).toMatchObject({ attempts: 3, nodeId: 'node-1' });
    }

    const other = runCli(['retry', '--config', s.config, '--remote', 'nosuch']);
    expect(other).toMatchObject({ status: 0, stdout: 'Nothing to retry\n' });
    expect(taskFilesIn(storeDir(s.store, 'failed', key))).toHaveLength(2);
    const retried = runCli(['retry', '--config', s.config, '--remote', 'dr']);
    expect(retried).toMatchObject({ status: 0, stdout: 'moved 2 failed tasks back to waiting\n', stderr: '' });
    expect(waitingTaskNames(s.store).sort()).toEqual(parked);
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([]);

    const daemon = await startGitDaemon(s.destBase, { port: s.port });
    stops.push(() => daemon.stop());
    const second = startNode(s, 'node-1', true);
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(second.problems()).toEqual([]);
    expect(lsRemote(s.uri)).toEqual(refsOf(s.source));
    expect(waitingTaskNames(s.store)).toEqual([]);
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([]);

    expect(runCli(['retry', '--config', s.config, '--all'])).toMatchObject({ status: 0, stdout: 'Nothing to retry\n' });
    const usage = runCli(['retry', '--config', s.config]);
    expect(usage).toMatchObject({ status: 2, stdout: '', stderr: 'refrelay: retry: give --all, --remote NAME or --uri SUBSTRING\n' });
  });

  it('a retry state three thousand years ahead is capped at 1 h, not a wedge: refrelay retry --uri clears it and the running daemon delivers', async () => {
    const s = await setup('refrelay-far-backoff', ['replicationRetry = 300ms']);
    const daemon = await startGitDaemon(s.destBase, { port: s.port });
    stops.push(() => daemon.stop());
    const key = uriKey(s.uri);
    const writtenAt = Date.now();
    const farAhead = writtenAt + 3000 * 365.25 * 24 * 3600 * 1000;
    mkdirSync(join(s.store, 'uri-state'), { recursive: true });
    writeFileSync(
      join(s.store, 'uri-state', `${key}.json`),
      `${JSON.stringify({ uri: s.uri, attempts: 2, lastError: 'connection refused', notBefore: farAhead, updatedAt: writtenAt, nodeId: 'node-0' })}\n`,
    );
    enqueue(s, 'refs/heads/main');
    const node = startNode(s, 'node-1');

    const capped = await node.waitForLog((line) => line.msg === 'retry state asked for a backoff beyond the cap; capped');
    expect(capped).toMatchObject({ uri: s.uri, notBefore: farAhead, capMs: DEFAULT_BACKOFF_CAP_MS });
    const state = readUriStateFile(s.store, key)!;
    expect(state).toMatchObject({ uri: s.uri, attempts: 2, notBefore: capped.cappedTo });
    expect(state.notBefore as number).toBeLessThanOrEqual(Date.now() + DEFAULT_BACKOFF_CAP_MS);
    // The job saw the backoff and pushed nothing; the task still waits.
    expect(lsRemote(s.uri).has('refs/heads/main')).toBe(false);
    expect(waitingTaskNames(s.store)).toHaveLength(1);

    const retried = runCli(['retry', '--config', s.config, '--uri', '/app.git']);
    expect(retried).toEqual({ status: 0, stdout: `cleared the backoff of 1 URI:\n  ${s.uri}\n`, stderr: '' });
    await waitUntil('delivery without a restart', () => lsRemote(s.uri).get('refs/heads/main') === refsOf(s.source).get('refs/heads/main'));
    expect(await node.waitForLog((line) => line.msg === 'pushed')).toMatchObject({ uri: s.uri, result: 'ok' });
    await waitUntil('an empty queue', () => waitingTaskNames(s.store).length === 0 && namesIn(storeDir(s.store, 'running')).length === 0);
    expect(readUriStateFile(s.store, key)).toBeUndefined();
    expect(node.child.exitCode).toBeNull();
    expect(node.logs().filter((line) => line.msg === 'pushed')).toHaveLength(1);
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);
  });
});
