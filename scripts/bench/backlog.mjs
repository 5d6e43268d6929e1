// Backlog: what a node's start, its passes and pushes, its monitoring endpoints and
// `refrelay status` cost at 10,000 / 100,000 / 1,000,000 waiting tasks, ten per URI. The tasks
// are written straight into the store in the layout and format `enqueue` writes, backdated an hour.
// Each size is measured twice, by fresh node processes:
//   due:  every task is due (backdated an hour; replicationDelay the default 15 s, as sites run
//         it); maxPushes 2, so pushing does not dominate. Start → first claim,
//         start → every waiting folder learned, then node CPU per push (git's CPU not counted)
//         over a window, peak RSS.
//   idle: the same backlog with a replicationDelay of a day, so nothing is due: node CPU per
//         second, i.e. per pass while passes keep their 1 s period (a node whose passes take
//         longer than that is busy all the time: its figure is then about 1,000 ms), and the
//         latency of /metrics and /readyz.
// `refrelay status` runs against the idle store while the idle node runs: wall time and peak RSS.
// Sizes: BENCH_BACKLOG_SIZES=10000,100000 (default 10,000, 100,000 and 1,000,000; --quick: 10,000).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { encodeTask } from '../../dist/task/task-codec.js';
import { taskKey, uriKey } from '../../dist/task/task-key.js';
import { bin, makeSource, startNode } from './cluster-util.mjs';
import { processCpuMs } from './cpu-sampler.mjs';
import { destinationsParent, fmt, median, withTempDir } from './util.mjs';

const TASKS_PER_URI = 10;
const PUSH_WINDOW_MS = 20_000;
const IDLE_WINDOW_MS = 10_000;
const INTERVAL_MS = 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function sizes(quick) {
  if (process.env.BENCH_BACKLOG_SIZES) return process.env.BENCH_BACKLOG_SIZES.split(',').map(Number);
  return quick ? [10_000] : [10_000, 100_000, 1_000_000];
}

/** Peak resident set of a live process, from /proc (VmHWM), in MB. */
function peakRssMb(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(line.split(/\s+/)[1]) / 1024;
}

/** One source repository with ten branches; every project is a symlink to it. */
export function makeProjects(root, uriCount) {
  const { refs } = makeSource(root, 'src', TASKS_PER_URI);
  for (let u = 0; u < uriCount; u++) symlinkSync(join(root, 'base', 'src.git'), join(root, 'base', `p${u}.git`));
  return refs;
}

/** The tasks, as `enqueue` would have written them an hour ago. */
export function writeTasks(store, dests, uriCount, refs) {
  const waiting = join(store, 'ref-updates', 'waiting');
  const anHourAgo = new Date(Date.now() - 3600_000);
  for (let u = 0; u < uriCount; u++) {
    const uri = `file://${dests}/p${u}.git`;
    const folder = join(waiting, uriKey(uri));
    mkdirSync(folder);
    for (const ref of refs) {
      const task = { project: `p${u}`, refs: [ref], uri, remote: 'mirror' };
      const path = join(folder, `${taskKey(task)}.json`);
      writeFileSync(path, encodeTask(task));
      utimesSync(path, anHourAgo, anHourAgo);
    }
  }
}

export function writeConfig(path, { store, root, dests, replicationDelay, port }) {
  writeFileSync(
    path,
    [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${join(root, 'base')}`,
      `  distributionInterval = ${INTERVAL_MS}ms`,
      '  randomDelay = 0',
      '  maxPushes = 2',
      `  httpListen = ${port === undefined ? 'off' : `127.0.0.1:${port}`}`,
      '[remote "mirror"]',
      `  url = file://${dests}/\${name}.git`,
      `  replicationDelay = ${replicationDelay}`,
      '',
    ].join('\n'),
  );
}

export async function waitFor(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`backlog bench: timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Start → first claim, node CPU per push and peak RSS, with every task due. */
async function measureDue(config) {
  const started = Date.now();
  const node = startNode(config, 'bench');
  try {
    await waitFor('the first claim', () => node.logs().find((line) => line.msg === 'claimed'), 600_000);
    const firstClaimMs = Date.now() - started;
    // Pushes go on while the node reads one task per folder; the steady cost comes after.
    await waitFor('every folder learned', () => node.logs().some((line) => line.msg === 'every waiting folder learned'), 1_200_000);
    const learnedMs = Date.now() - started;
    const pushesBefore = node.logs().filter((line) => line.msg === 'pushed').length;
    const cpuBefore = processCpuMs(node.pid);
    await sleep(PUSH_WINDOW_MS);
    const pushes = node.logs().filter((line) => line.msg === 'pushed').length - pushesBefore;
    const cpuPerPushMs = (processCpuMs(node.pid) - cpuBefore) / Math.max(1, pushes);
    return { firstClaimMs, learnedMs, cpuPerPushMs, pushes, peakRssMb: peakRssMb(node.pid) };
  } finally {
    await node.stop();
  }
}

async function timeRequest(url) {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const response = await fetch(url);
    await response.text();
    times.push(performance.now() - started);
  }
  return median(times);
}

/** Node CPU per pass with nothing due, and the monitoring endpoints' latency. */
async function measureIdle(config, port) {
  const node = startNode(config, 'bench');
  try {
    // A node reads one task of every waiting folder over its first passes; steady passes come after.
    await waitFor('every folder learned', () => node.logs().some((line) => line.msg === 'every waiting folder learned'), 600_000);
    await sleep(3 * INTERVAL_MS);
    const cpuBefore = processCpuMs(node.pid);
    await sleep(IDLE_WINDOW_MS);
    // Passes start every interval (daemon/daemon.ts), so the window holds one pass per interval.
    const cpuPerPassMs = (processCpuMs(node.pid) - cpuBefore) / (IDLE_WINDOW_MS / INTERVAL_MS);
    const metricsMs = await timeRequest(`http://127.0.0.1:${port}/metrics`);
    const readyzMs = await timeRequest(`http://127.0.0.1:${port}/readyz`);
    // With the node alive, as an operator runs it: from the node's queue summary on a long queue.
    await waitFor('a queue summary', () => existsSync(join(dirname(config), 'store', 'history', 'bench.queue.json')), 60_000);
    const status = measureStatus(config);
    return { cpuPerPassMs, metricsMs, readyzMs, peakRssMb: peakRssMb(node.pid), status };
  } finally {
    await node.stop();
  }
}

function measureStatus(config) {
  const started = performance.now();
  const result = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, bin, 'status', '--config', config], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`refrelay status exited ${result.status}: ${result.stderr.slice(-500)}`);
  const rssKb = Number(result.stderr.trim().split('\n').at(-1));
  return { ms, rssMb: rssKb / 1024 };
}

async function measureSize(taskCount) {
  const uriCount = taskCount / TASKS_PER_URI;
  return withTempDir('backlog', (root) =>
    withTempDir(
      'backlog-dests',
      async (dests) => {
        const store = join(root, 'store');
        const refs = makeProjects(root, uriCount);
        const dueConfig = join(root, 'due.config');
        const idleConfig = join(root, 'idle.config');
        const port = 20_000 + Math.floor(Math.random() * 20_000);
        writeConfig(dueConfig, { store, root, dests, replicationDelay: '15s' });
        writeConfig(idleConfig, { store, root, dests, replicationDelay: '1d', port });
        if (spawnSync(process.execPath, [bin, 'init', '--config', dueConfig]).status !== 0) throw new Error('refrelay init failed');
        mkdirSync(dests, { recursive: true });
        const generated = performance.now();
        writeTasks(store, dests, uriCount, refs);
        const generateMs = performance.now() - generated;
        const idle = await measureIdle(idleConfig, port);
        const { status } = idle;
        const due = await measureDue(dueConfig);
        return { taskCount, uriCount, generateMs, due, idle, status };
      },
      destinationsParent,
    ),
  );
}

export async function run({ quick }) {
  const results = [];
  for (const size of sizes(quick)) results.push(await measureSize(size));
  const small = results[0];
  const large = results.at(-1);
  const claimRatio = large.due.firstClaimMs / small.due.firstClaimMs;
  const pushRatio = large.due.cpuPerPushMs / small.due.cpuPerPushMs;
  const million = results.find((r) => r.taskCount === 1_000_000);
  const checks = [
    results.every((r) => r.idle.cpuPerPassMs <= 50),
    results.every((r) => r.idle.metricsMs <= 100 && r.idle.readyzMs <= 100),
    claimRatio <= 2,
    pushRatio <= 1.5,
    million === undefined || (million.due.firstClaimMs <= 5000 && million.due.peakRssMb <= 300 && million.status.ms <= 2000 && million.status.rssMb <= 150),
  ];
  const n = (count) => count.toLocaleString('en-US');
  return {
    pass: checks.every(Boolean),
    summary:
      `at ${n(large.taskCount)} vs ${n(small.taskCount)} tasks: start → first claim ${claimRatio.toFixed(1)}× (target ≤ 2×), ` +
      `node CPU per push ${pushRatio.toFixed(1)}× (target ≤ 1.5×); idle pass ≤ 50 ms, /metrics and /readyz ≤ 100 ms at every size` +
      (million === undefined ? '' : '; at 1,000,000: first claim ≤ 5 s, node RSS ≤ 300 MB, status ≤ 2 s and ≤ 150 MB'),
    details: results.map(
      (r) =>
        `${n(r.taskCount)} tasks (${n(r.uriCount)} URIs, generated in ${fmt(r.generateMs)}): start → first claim ${fmt(r.due.firstClaimMs)}, every folder learned ${fmt(r.due.learnedMs)}, ` +
        `node CPU ${fmt(r.due.cpuPerPushMs)}/push over ${r.due.pushes} pushes, peak RSS ${r.due.peakRssMb.toFixed(0)} MB pushing / ${r.idle.peakRssMb.toFixed(0)} MB idle; ` +
        `idle: node CPU ${fmt(r.idle.cpuPerPassMs)} per 1 s pass period, /metrics ${fmt(r.idle.metricsMs)}, /readyz ${fmt(r.idle.readyzMs)}; status ${fmt(r.status.ms)}, ${r.status.rssMb.toFixed(0)} MB`,
    ),
  };
}
