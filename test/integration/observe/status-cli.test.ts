import { spawn } from 'node:child_process';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { runCli } from '../../support/cli.js';
import { cliBin } from '../../support/paths.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { waitingTaskPaths, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('refrelay status --watch', () => {
  it('prints the table again every 2 s until interrupted, and refuses --json with --watch', async () => {
    const root = tempDir('refrelay-status-watch');
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      '[remote "dr"]',
      '  url = /srv/dr/${name}.git',
    ]);
    await new TaskStore({ root: join(root, 'store'), nodeId: 'hook' }).create({
      project: 'app',
      refs: ['refs/heads/main'],
      uri: '/srv/dr/app.git',
      remote: 'dr',
    });

    const child = spawn(process.execPath, [cliBin, 'status', '--watch', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const deadline = Date.now() + 15_000;
    while ((out.match(/\(every 2 s; Ctrl-C to stop\)/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('exit', resolve));
    const refreshes = out.split('(every 2 s; Ctrl-C to stop)');
    expect(refreshes.length).toBeGreaterThanOrEqual(3);
    for (const screen of refreshes.slice(0, 2)) expect(screen).toMatch(/dr\s+\/srv\/dr\/app\.git\s+1\s/);

    const both = runCli(['status', '--watch', '--json', '--config', config]);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('status: --watch shows the table; use --json without --watch (or poll it)');
  }, 30_000);
});

/** Every number under a `…Ms`, `…At` or `at` key, with its path, that is not a whole number. */
function fractionalTimes(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => fractionalTimes(item, `${path}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) =>
    typeof item === 'number' && (key === 'at' || key.endsWith('Ms') || key.endsWith('At')) && !Number.isInteger(item)
      ? [`${path}.${key}=${item}`]
      : fractionalTimes(item, `${path}.${key}`),
  );
}

describe('refrelay status times', () => {
  it('shows durations and instants as whole milliseconds, and a clock a few ms behind as +0.0s, not -0.0s', async () => {
    const root = tempDir('refrelay-status-times');
    const store = join(root, 'store');
    const config = writeConfig(join(root, 'replication.config'), ['[replication]', `  storePath = ${store}`, '[remote "dr"]', '  url = /srv/dr/${name}.git']);
    await new TaskStore({ root: store, nodeId: 'hook' }).create({ project: 'app', refs: ['refs/heads/main'], uri: '/srv/dr/app.git', remote: 'dr' });
    // File times carry sub-millisecond parts, as they do on ext4, xfs and NFS.
    const queuedAt = (Date.now() - 20_464.0693359375) / 1000;
    const tasks = waitingTaskPaths(store);
    expect(tasks).toHaveLength(1);
    for (const path of tasks) utimesSync(path, queuedAt, queuedAt);
    const beatAt = Date.now() - 0.0693359375;
    writeFileSync(
      join(store, 'nodes', 'master-1.json'),
      JSON.stringify({
        version: 1,
        nodeId: 'master-1',
        pid: 4242,
        host: 'm1',
        startedAt: beatAt - 1000.5,
        beatAt,
        counter: 3,
        clockOffsetMs: -3.4,
        running: [],
      }),
    );
    utimesSync(join(store, 'nodes', 'master-1.json'), beatAt / 1000, beatAt / 1000);

    const table = runCli(['status', '--config', config]);
    expect(table.stderr).toBe('');
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/^master-1 +alive +\d+s ago +m1 +4242 +\+0\.0s$/m);

    const json = runCli(['status', '--json', '--config', config]);
    expect(json.status).toBe(0);
    const parsed = JSON.parse(json.stdout) as {
      remotes: Array<{ oldestWaitingAgeMs: number }>;
      nodes: Array<{ clockOffsetMs: number; record: { beatAt: number } }>;
    };
    expect(fractionalTimes(parsed)).toEqual([]);
    expect(parsed.remotes[0]!.oldestWaitingAgeMs).toBeGreaterThanOrEqual(20_464);
    expect(parsed.nodes[0]!.clockOffsetMs).toBe(-3);
    expect(parsed.nodes[0]!.record.beatAt).toBe(Math.round(beatAt));
    expect(json.stdout).not.toMatch(/-0\b/);
  });
});

describe('refrelay status on a long queue', () => {
  it("counts 1,200 waiting URIs from a live node's summary and says so; --all reads the store itself", async () => {
    const root = tempDir('refrelay-status-summary');
    const store = join(root, 'store');
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      '  httpListen = off',
      '[remote "dr"]',
      '  url = /srv/dr/${name}.git',
      // Nothing is due while the test runs: the queue stays as it was written.
      '  replicationDelay = 1d',
    ]);
    const tasks = new TaskStore({ root: store, nodeId: 'hook' });
    const task = (i: number) => ({ project: `p${i}`, refs: ['refs/heads/main'], uri: `/srv/dr/p${i}.git`, remote: 'dr' });
    await tasks.createMany(Array.from({ length: 1200 }, (_, i) => task(i)));
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      await node.waitForLog((line) => line.msg === 'every waiting folder learned', 60_000);
      const summaryFile = join(store, 'history', 'n1.queue.json');
      await waitUntil('a complete summary', () => existsSync(summaryFile) && (JSON.parse(readFileSync(summaryFile, 'utf8')) as { complete: boolean }).complete);

      const table = runCli(['status', '--config', config]);
      expect(table.status, table.stderr).toBe(0);
      expect(table.stdout).toContain('waiting 1200  running 0  failed 0  corrupt 0');
      expect(table.stdout).toMatch(/waiting as node n1 counted it [0-9.]+m?s ago \(refrelay status --all counts the store\)/);
      const json = JSON.parse(runCli(['status', '--json', '--config', config]).stdout) as {
        queueFrom: { nodeId: string } | null;
        totals: { waiting: number };
        remotes: Array<{ name: string; waiting: number; uris: unknown[] }>;
      };
      expect(json.queueFrom?.nodeId).toBe('n1');
      expect(json.totals.waiting).toBe(1200);
      expect(json.remotes.find((remote) => remote.name === 'dr')).toMatchObject({ waiting: 1200, uris: expect.any(Array) });
      expect(json.remotes.find((remote) => remote.name === 'dr')!.uris).toHaveLength(200);

      await tasks.create(task(1200));
      const exact = runCli(['status', '--all', '--config', config]);
      expect(exact.stdout).toContain('waiting 1201  running 0');
      expect(exact.stdout).not.toContain('counted it');
    } finally {
      node.signal('SIGTERM');
      await node.exited;
    }
  }, 90_000);
});
