import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { freePort } from '../../support/free-port.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

/**
 * A real Prometheus (Debian package prometheus, installed by scripts/test.sh) scrapes two running
 * nodes and evaluates the shipped alert rules, with their windows and thresholds shortened so a
 * test can watch them: while a destination is down the failure-ratio and oldest-waiting alerts of
 * its remote fire, and they clear once it is back and the update delivered.
 */
const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
const daemons: GitDaemon[] = [];
let prometheus: ChildProcess | undefined;
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  for (const daemon of daemons.splice(0)) await daemon.stop();
  if (prometheus !== undefined && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  prometheus = undefined;
});

const RULES = fileURLToPath(new URL('../../../contrib/prometheus/refrelay-alerts.yml', import.meta.url));

/** The shipped rules with test-sized time: every `for` 2 s, rate windows 20 s, the oldest-waiting threshold 3 s. */
function shortenedRules(): string {
  const rules = readFileSync(RULES, 'utf8')
    .replace(/for: \d+m/g, 'for: 2s')
    .replace(/\[10m\]/g, '[20s]')
    .replace(/\[1h\]/g, '[1m]')
    .replace('max by (remote) (refrelay_oldest_waiting_seconds) > 1800', 'max by (remote) (refrelay_oldest_waiting_seconds) > 3');
  // Each change must have found its text: a rule renamed or rewritten must fail here, not pass unseen.
  expect(rules).not.toMatch(/for: \d+m|\[10m\]|\[1h\]|> 1800/);
  return rules;
}

interface Alert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

async function alerts(port: number): Promise<Alert[]> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/alerts`);
  return ((await response.json()) as { data: { alerts: Alert[] } }).data.alerts;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function startPrometheus(root: string, targets: string[]): Promise<number> {
  const port = await freePort();
  writeFileSync(join(root, 'rules.yml'), shortenedRules());
  writeFileSync(
    join(root, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files:',
      `  - ${join(root, 'rules.yml')}`,
      'scrape_configs:',
      '  - job_name: refrelay',
      '    static_configs:',
      `      - targets: [${targets.map((target) => `'${target}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const child = spawn(
    'prometheus',
    [`--config.file=${join(root, 'prometheus.yml')}`, `--storage.tsdb.path=${join(root, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  prometheus = child;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('error', resolve);
    child.once('spawn', () => resolve(undefined));
  });
  if (spawned !== undefined) throw new Error(`prometheus could not run (${spawned.message}): scripts/test.sh installs it (Debian package prometheus)`);
  await until(
    'prometheus ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr}`);
      return (await fetch(`http://127.0.0.1:${port}/-/ready`)).ok ? true : undefined;
    },
    30_000,
  );
  return port;
}

describe('the alert rules in a real Prometheus scraping two nodes', () => {
  it('fire the failure-ratio and oldest-waiting alerts while a destination is down, and clear them once it is back', async () => {
    const root = tempDir('refrelay-prometheus');
    const storePath = join(root, 'store');
    const repo = initBare(join(root, 'base', 'app.git'));
    const work = makeWorkTree(join(root, 'work', 'app'), 1);
    git(work, ['push', '-q', repo, 'main']);
    initBare(join(root, 'dest', 'app.git'));
    const gitPort = await freePort(); // nothing listens yet: the destination is down
    const httpPorts = [await freePort(), await freePort()];
    for (const [i, httpPort] of httpPorts.entries()) {
      const config = writeConfig(join(root, `node-${i + 1}.config`), [
        '[replication]',
        `  storePath = ${storePath}`,
        `  basePath = ${join(root, 'base')}`,
        '  distributionInterval = 200ms',
        '  randomDelay = 0',
        `  httpListen = 127.0.0.1:${httpPort}`,
        '[remote "dr"]',
        `  url = git://127.0.0.1:${gitPort}/\${name}.git`,
        '  replicationDelay = 0',
        '  replicationRetry = 1s',
      ]);
      nodes.push(RefrelayNode.start({ config, nodeId: `node-${i + 1}` }));
    }
    for (const node of nodes) await node.waitForLog((line) => line.msg.startsWith('http endpoints listening'));
    const promPort = await startPrometheus(
      root,
      httpPorts.map((port) => `127.0.0.1:${port}`),
    );

    await new TaskStore({ root: storePath, nodeId: 'hook' }).create({
      project: 'app',
      refs: ['refs/heads/main'],
      uri: `git://127.0.0.1:${gitPort}/app.git`,
      remote: 'dr',
    });
    const states = new Set<string>();
    const firing = await until(
      'both alerts firing for remote dr',
      async () => {
        const now = await alerts(promPort);
        for (const alert of now) states.add(`${alert.labels.alertname}:${alert.state}`);
        const names = now.filter((alert) => alert.state === 'firing' && alert.labels.remote === 'dr').map((alert) => alert.labels.alertname);
        return names.includes('RefrelayPushFailureRatio') && names.includes('RefrelayOldestWaitingTooOld') ? now : undefined;
      },
      90_000,
    );
    expect(firing.filter((alert) => alert.labels.alertname === 'RefrelayOldestWaitingTooOld')).toHaveLength(1); // one, not one per node
    expect(states).toContain('RefrelayPushFailureRatio:firing');

    daemons.push(await startGitDaemon(join(root, 'dest'), { port: gitPort }));
    await until('delivered', async () => (refsOf(join(root, 'dest', 'app.git')).has('refs/heads/main') ? true : undefined), 60_000);
    await until(
      'both alerts cleared',
      async () => {
        const left = (await alerts(promPort)).filter((alert) => alert.labels.remote === 'dr');
        return left.length === 0 ? true : undefined;
      },
      90_000,
    );
  }, 240_000);
});
