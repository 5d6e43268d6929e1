import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { runCli } from '../../support/cli.js';
import { freePort } from '../../support/free-port.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
const daemons: GitDaemon[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  for (const daemon of daemons.splice(0)) await daemon.stop();
});

const PASSWORD = 's3cr3tPW-9f2';
const REQUIRED_METRICS = [
  'refrelay_tasks',
  'refrelay_oldest_waiting_seconds',
  'refrelay_pushes_total',
  'refrelay_push_duration_seconds',
  'refrelay_replication_delay_seconds',
  'refrelay_replication_lag_seconds',
  'refrelay_refs_total',
  'refrelay_retries_total',
  'refrelay_lock_takeovers_total',
  'refrelay_quarantined_total',
  'refrelay_nodes',
  'refrelay_clock_offset_seconds',
  'refrelay_store_writable',
  'refrelay_lock_stale_seconds',
  'refrelay_push_failures_total',
  'refrelay_running_pushes',
];

/**
 * The metric names the shipped alert rules and Grafana dashboard query (contrib/): each must be
 * exported, or an alert silently never fires and a panel silently shows nothing after a rename.
 * A histogram's `_bucket`, `_sum` and `_count` series are its name.
 */
function metricsQueriedByContrib(): { rules: string[]; dashboard: string[] } {
  const contrib = (path: string): string => readFileSync(fileURLToPath(new URL(`../../../contrib/${path}`, import.meta.url)), 'utf8');
  const names = (queries: string): string[] =>
    [...new Set((queries.match(/\brefrelay_[a-z_]+/g) ?? []).map((name) => name.replace(/_(bucket|sum|count)$/, '')))].sort();
  const rules = contrib('prometheus/refrelay-alerts.yml')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n');
  const panels = (JSON.parse(contrib('grafana/refrelay.json')) as { panels: Array<{ targets?: Array<{ expr: string }> }> }).panels;
  return { rules: names(rules), dashboard: names(panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)).join('\n')) };
}

async function get(address: string, path: string): Promise<{ status: number; text: string; type: string }> {
  const response = await fetch(`http://${address}${path}`);
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') ?? '' };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every sample of the exposition text as [name, labels, value]; throws on a line that does not parse. */
function parseExposition(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  const samples: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      if (!/^# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))$/.test(line))
        throw new Error(`bad comment line: ${line}`);
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\})? (-?(?:[0-9.]+(?:e[+-]?[0-9]+)?|\+Inf|-Inf|NaN))$/.exec(
      line,
    );
    if (match === null) throw new Error(`bad sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function sum(samples: ReturnType<typeof parseExposition>, name: string, labels: Record<string, string>): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((total, s) => total + s.value, 0);
}

function source(root: string, project: string): string {
  const repo = initBare(join(root, 'base', `${project}.git`));
  const work = makeWorkTree(join(root, 'work', project), 1);
  git(work, ['push', '-q', repo, 'main']);
  return repo;
}

/** The one node of a readiness test: remote "dr" over git:// on `gitPort` (down or up), retried every second. */
function readinessConfig(root: string, httpPort: number, gitPort: number, caughtUpThreshold: string): string {
  return writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${join(root, 'base')}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 0',
    `  caughtUpThreshold = ${caughtUpThreshold}`,
    `  httpListen = 127.0.0.1:${httpPort}`,
    '[remote "dr"]',
    `  url = git://127.0.0.1:${gitPort}/\${name}.git`,
    '  replicationDelay = 0',
    '  replicationRetry = 1s',
  ]);
}

/** The first /readyz answer with this status. */
function readyzAnswering(address: string, status: number, timeoutMs?: number): Promise<{ status: number; text: string }> {
  return until(
    `readyz ${status}`,
    async () => {
      const answer = await get(address, '/readyz');
      return answer.status === status ? answer : undefined;
    },
    timeoutMs,
  );
}

describe('metrics, status, page and logs of a running cluster', () => {
  it('moves the counters as two daemons push, serves valid exposition text, and never shows a password', async () => {
    const root = tempDir('refrelay-observe');
    const storePath = join(root, 'store');
    const projects = ['alpha', 'beta', 'gamma'];
    for (const project of projects) {
      source(root, project);
      initBare(join(root, 'dest', `${project}.git`));
    }
    const closedPort = await freePort(); // nothing listens: pushes there fail and are retried
    const ports = [await freePort(), await freePort()];
    const configs = ports.map((port, i) =>
      writeConfig(join(root, `node-${i + 1}.config`), [
        '[replication]',
        `  storePath = ${storePath}`,
        `  basePath = ${join(root, 'base')}`,
        '  distributionInterval = 200ms',
        '  randomDelay = 100ms',
        '  lockStale = 6s',
        `  httpListen = 127.0.0.1:${port}`,
        '[remote "mirror"]',
        `  url = file://${join(root, 'dest')}/\${name}.git`,
        '  replicationDelay = 0',
        '[remote "private"]',
        `  url = ssh://alice:${PASSWORD}@127.0.0.1:${closedPort}/srv/\${name}.git`,
        '  replicationDelay = 0',
        '  replicationRetry = 1s',
        '  timeout = 10s',
      ]),
    );
    const addresses = ports.map((port) => `127.0.0.1:${port}`);
    for (const [i, config] of configs.entries()) nodes.push(RefrelayNode.start({ config, nodeId: `node-${i + 1}`, extraArgs: ['--log-format', 'json'] }));
    for (const node of nodes) await node.waitForLog((line) => line.msg.startsWith('http endpoints listening'));

    const before = parseExposition((await get(addresses[0]!, '/metrics')).text);
    expect(sum(before, 'refrelay_pushes_total', { remote: 'mirror' })).toBe(0);
    expect((await get(addresses[0]!, '/healthz')).status).toBe(200);

    const store = new TaskStore({ root: storePath, nodeId: 'hook' });
    for (const project of projects) {
      await store.create({ project, refs: ['refs/heads/main'], uri: `file://${join(root, 'dest')}/${project}.git`, remote: 'mirror' });
      await store.create({ project, refs: ['refs/heads/main'], uri: `ssh://alice:${PASSWORD}@127.0.0.1:${closedPort}/srv/${project}.git`, remote: 'private' });
    }
    await until('every mirror has main', () => (projects.every((p) => refsOf(join(root, 'dest', `${p}.git`)).has('refs/heads/main')) ? true : undefined));
    const scraped = await until('pushes and retries counted', async () => {
      const all = await Promise.all(addresses.map(async (address) => parseExposition((await get(address, '/metrics')).text)));
      const pushed = all.reduce((total, samples) => total + sum(samples, 'refrelay_pushes_total', { remote: 'mirror', result: 'ok' }), 0);
      const retries = all.reduce((total, samples) => total + sum(samples, 'refrelay_retries_total', { remote: 'private' }), 0);
      return pushed >= projects.length && retries >= 1 ? all : undefined;
    });
    const metricsText = (await get(addresses[1]!, '/metrics')).text;
    const samples = parseExposition(metricsText);
    for (const name of REQUIRED_METRICS) expect(metricsText).toContain(`# TYPE ${name} `);
    const queried = metricsQueriedByContrib();
    expect(queried.rules.length).toBeGreaterThanOrEqual(9);
    expect(queried.dashboard.length).toBeGreaterThanOrEqual(14);
    expect([...queried.rules, ...queried.dashboard].filter((name) => !metricsText.includes(`# TYPE ${name} `))).toEqual([]);
    // Failed pushes by class: the private destination refuses every connection.
    const failures = scraped.flatMap((s) => s.filter((sample) => sample.name === 'refrelay_push_failures_total' && sample.value > 0));
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(new Set(failures.map((sample) => `${sample.labels.remote} ${sample.labels.kind}`))).toEqual(new Set(['private unreachable']));
    expect(sum(samples, 'refrelay_store_writable', {})).toBe(1);
    expect(sum(samples, 'refrelay_lock_stale_seconds', {})).toBe(6);
    // Cluster-wide gauges are the same from either node: the private URIs wait (retrying) on both views.
    // One gauge reading lists waiting/ and running/ side by side, so a task moved between them
    // meanwhile (a retry claims and resets it) can be missed by one reading, never by every one.
    await until('the private tasks counted waiting or running', async () => {
      const view = parseExposition((await get(addresses[1]!, '/metrics')).text);
      const counted =
        sum(view, 'refrelay_tasks', { state: 'waiting', remote: 'private' }) + sum(view, 'refrelay_tasks', { state: 'running', remote: 'private' });
      return counted === projects.length ? true : undefined;
    });
    expect(sum(samples, 'refrelay_nodes', { state: 'alive' })).toBe(2);
    const refsUpdated = scraped.reduce((total, s) => total + sum(s, 'refrelay_refs_total', { remote: 'mirror' }), 0);
    expect(refsUpdated).toBe(projects.length);
    expect(scraped.reduce((total, s) => total + sum(s, 'refrelay_push_duration_seconds_count', { remote: 'mirror' }), 0)).toBe(projects.length);
    // Labels stay bounded: no URI, ref or task ever becomes a label value.
    for (const sample of samples) for (const value of Object.values(sample.labels)) expect(value).not.toMatch(/\/|refs|\.json/);

    const statusText = (await get(addresses[0]!, '/status')).text;
    const status = JSON.parse(statusText) as {
      totals: { waiting: number };
      node: { nodeId: string; uris: unknown[] };
      nodes: Array<{ nodeId: string; state: string }>;
      history: Record<string, { uri: string; events: Array<{ event: string; node: string }> }>;
    };
    expect(status.node.nodeId).toBe('node-1');
    expect(status.nodes.map((n) => [n.nodeId, n.state])).toEqual([
      ['node-1', 'alive'],
      ['node-2', 'alive'],
    ]);
    await until('history written by the nodes', async () => {
      const history = (JSON.parse((await get(addresses[0]!, '/status')).text) as typeof status).history;
      const mirrorEvents = Object.values(history)
        .filter((entry) => entry.uri.startsWith('file://'))
        .flatMap((entry) => entry.events.map((e) => e.event));
      return mirrorEvents.filter((e) => e === 'pushed').length === projects.length && mirrorEvents.includes('claimed') && mirrorEvents.includes('queued')
        ? true
        : undefined;
    });

    const page = await get(addresses[1]!, '/');
    expect(page.type).toContain('text/html');
    expect(page.text).toContain('<h2>Remotes</h2>');
    expect(page.text).toContain('data-remote="private"');

    const cliStatus = runCli(['status', '--json', '--config', configs[0]!]);
    expect(cliStatus.status).toBe(0);
    const cliHistory = (JSON.parse(cliStatus.stdout) as typeof status).history;
    expect(Object.values(cliHistory).some((entry) => entry.events.some((e) => e.event === 'retry-scheduled'))).toBe(true);

    for (const node of nodes) node.signal('SIGTERM');
    for (const node of nodes) await node.exited;
    const historyFiles = readdirSync(join(storePath, 'history')).map((name) => readFileSync(join(storePath, 'history', name), 'utf8'));
    // Each node's history, its queue summary and its minute trend: none may quote a password either.
    expect(historyFiles).toHaveLength(6);
    const everything = [
      metricsText,
      statusText,
      page.text,
      cliStatus.stdout,
      cliStatus.stderr,
      ...historyFiles,
      ...nodes.map((n) => JSON.stringify(n.logs()) + n.stderr),
    ];
    expect(everything.join('\n').includes('alice:***@')).toBe(true); // the URI is shown, redacted
    for (const output of everything) expect(output).not.toContain(PASSWORD);
  }, 90_000);

  it('flips /readyz to 503 while a destination is down past caughtUpThreshold, and back to 200 once it recovers', async () => {
    const root = tempDir('refrelay-readyz');
    const storePath = join(root, 'store');
    source(root, 'app');
    initBare(join(root, 'dest', 'app.git'));
    const gitPort = await freePort();
    const httpPort = await freePort();
    const config = readinessConfig(root, httpPort, gitPort, '2s');
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg.startsWith('http endpoints listening'));
    const address = `127.0.0.1:${httpPort}`;
    expect((await get(address, '/readyz')).status).toBe(200);

    await new TaskStore({ root: storePath, nodeId: 'hook' }).create({
      project: 'app',
      refs: ['refs/heads/main'],
      uri: `git://127.0.0.1:${gitPort}/app.git`,
      remote: 'dr',
    });
    const lagging = await readyzAnswering(address, 503);
    expect(JSON.parse(lagging.text)).toMatchObject({ status: 'lagging', caughtUpThresholdMs: 2000, laggingRemotes: ['dr'] });
    expect((await get(address, '/healthz')).status).toBe(200); // lagging is not unhealthy

    daemons.push(await startGitDaemon(join(root, 'dest'), { port: gitPort }));
    const ready = await readyzAnswering(address, 200, 20_000);
    expect(JSON.parse(ready.text)).toMatchObject({ status: 'caught up', oldestWaitingAgeMs: null });
    // Caught up means nothing waits too long; the claimed task may still be on its way.
    await until('delivered', () => (refsOf(join(root, 'dest', 'app.git')).has('refs/heads/main') ? true : undefined), 10_000);
  }, 60_000);
  it('says /readyz 503 for a destination that delivered before and now refuses, at its first failed push, not a caughtUpThreshold later', async () => {
    const root = tempDir('refrelay-readyz-failing');
    const storePath = join(root, 'store');
    const repo = source(root, 'app');
    initBare(join(root, 'dest', 'app.git'));
    const destination = await startGitDaemon(join(root, 'dest'));
    daemons.push(destination);
    const httpPort = await freePort();
    const config = readinessConfig(root, httpPort, destination.port, '10s');
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg.startsWith('http endpoints listening'));
    const address = `127.0.0.1:${httpPort}`;
    const hook = new TaskStore({ root: storePath, nodeId: 'hook' });
    const task = (ref: string) => ({ project: 'app', refs: [ref], uri: `git://127.0.0.1:${destination.port}/app.git`, remote: 'dr' });
    await hook.create(task('refs/heads/main'));
    await node.waitForLog((line) => line.msg === 'pushed');
    const deliveredAt = Date.now();

    // The destination goes away; a caughtUpThreshold after the last delivery, a new update arrives.
    daemons.splice(daemons.indexOf(destination), 1);
    await destination.stop();
    await until('caughtUpThreshold past the delivery', () => (Date.now() - deliveredAt > 10_500 ? true : undefined), 20_000);
    git(join(root, 'work', 'app'), ['push', '-q', repo, 'main:topic']);
    await hook.create(task('refs/heads/topic'));
    const lagging = await readyzAnswering(address, 503);
    const body = JSON.parse(lagging.text) as { oldestWaitingAgeMs: number; laggingRemotes: string[]; failingRemotes: string[] };
    expect(body).toMatchObject({ laggingRemotes: ['dr'], failingRemotes: ['dr'] });
    expect(body.oldestWaitingAgeMs).toBeLessThan(10_000);
  }, 60_000);
});
