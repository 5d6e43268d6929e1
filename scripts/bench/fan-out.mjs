// Fan-out of 1,000 ref updates over 20 projects to 3 file:// destinations.
// Targets: pushes ≤ 1.1× the URIs touched; wall time ≤ 1.15× the store protocol's floor (the same
// consolidated pushes at the same concurrency with only DESIGN.md's file operations around them,
// see protocol-floor.mjs). Also reported: a raw `git push` loop and the same pushes from a Node
// loop, the node's CPU per push beside git's, and a naive hook that pushes every update to every
// destination as it happens.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStore } from '../../dist/store/task-store.js';
import { spawn } from 'node:child_process';
import { bareRepo, gitEnv, makeSource, pool, pushAsync, startNode } from './cluster-util.mjs';
import { machineSampler, startCpuSampler } from './cpu-sampler.mjs';
import { prepareProtocolFloor, runProtocolFloor, startProtocolFloorWorker } from './protocol-floor.mjs';
import { fmt, median, withTempDir, destinationsParent } from './util.mjs';

const DESTS = ['dr', 'mirror', 'ci'];
const THREADS = 2;
const ROUNDS = 5;
const WARM_UP_BURSTS = 5;
// Longer than writing a burst's 3,000 task files takes (1 s on a quiet machine, over 2 s on a busy
// one): a burst due before it is all written would be pushed in pieces.
const REPLICATION_DELAY_S = 6;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One `git` per line of `jobsFile` (its arguments; paths here have no spaces), `parallel` at a time. */
function rawLoop(jobsFile, parallel) {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `xargs -P ${parallel} -L 1 git < "$0" > /dev/null`, jobsFile], { env: gitEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`raw push loop exited ${code}: ${stderr}`))));
  });
}

export async function run({ quick }) {
  const projects = quick ? 5 : 20;
  const perProject = quick ? 20 : 50;
  // The destinations get a filesystem of their own (see destinationsParent), for refrelay and the
  // raw loop alike.
  return withTempDir('fanout', (root) => withTempDir('fanout-dests', (dests) => fanOut(root, dests, projects, perProject), destinationsParent));
}

async function fanOut(root, dests, projects, perProject) {
  const sources = [];
  for (let p = 0; p < projects; p++) sources.push({ project: `p${p}`, ...makeSource(root, `p${p}`, perProject) });
  const updates = sources.reduce((n, s) => n + s.refs.length, 0);
  const uris = projects * DESTS.length;
  const fresh = (label) => {
    for (const dest of DESTS) {
      rmSync(join(dests, label, dest), { recursive: true, force: true });
      for (const s of sources) bareRepo(join(dests, label, dest, `${s.project}.git`));
    }
  };

  // refrelay: one node runs throughout, as in production, and drains one burst per round into
  // emptied destinations. Unmeasured bursts first warm it up (JIT, the store's file worker), as
  // any node that has been running for a while is: V8 optimizes a function only after many calls,
  // and one burst runs the push path 60 times, so after a single burst the compiler still worked
  // through the measured ones. Interleaved with the raw loop, medians compared: this machine's
  // disk is noisy.
  const storePath = join(root, 'store');
  const jobsFile = join(root, 'raw-jobs.txt');
  const config = join(root, 'relay.config');
  writeFileSync(
    config,
    [
      '[replication]',
      `  storePath = ${storePath}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 100ms',
      '  randomDelay = 0',
      '  httpListen = off',
      `  maxPushes = ${THREADS * DESTS.length}`,
      ...DESTS.flatMap((dest) => [
        `[remote "${dest}"]`,
        `  url = file://${join(dests, 'relay', dest)}/\${name}.git`,
        `  replicationDelay = ${REPLICATION_DELAY_S}s`,
        `  threads = ${THREADS}`,
      ]),
    ].join('\n'),
  );
  // The store exists (with its marker) before the node starts: a node refuses an unmarked path.
  const store = new TaskStore({ root: storePath, nodeId: 'hook' });
  await store.open();
  const node = startNode(config, 'bench-1');
  const cpu = startCpuSampler(node.pid);
  const relayRuns = [];
  const relayCpu = [];
  const rawRuns = [];
  const rawCpu = [];
  const nodeLoopRuns = [];
  const floorRuns = [];
  const floorCpu = [];
  const floorWorker = startProtocolFloorWorker();
  // The store protocol's floor: the same pushes with the protocol's file operations around each
  // and nothing else (protocol-floor.mjs), its store beside refrelay's. Its CPU is this process's
  // (the sampler and the log parsing, a few ms, included).
  const runFloor = async () => {
    fresh('floor');
    const jobs = prepareProtocolFloor(
      join(root, 'floor-store'),
      DESTS.flatMap((dest) => sources.map((s) => ({ repo: s.repo, url: `file://${join(dests, 'floor', dest)}/${s.project}.git`, refs: s.refs }))),
    );
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    await runProtocolFloor(floorWorker, join(root, 'floor-store'), jobs, THREADS * DESTS.length);
    const ms = performance.now() - started;
    const cpuUsed = process.cpuUsage(cpuBefore);
    return { ms, cpuMs: (cpuUsed.user + cpuUsed.system) / 1000 };
  };
  let pushes = 0;
  try {
    await sleep(500);
    for (let round = 1 - WARM_UP_BURSTS; round <= ROUNDS; round++) {
      fresh('relay');
      const logsBefore = node.logs().length;
      // As in production, the node runs while the hooks queue the updates. The 1,000 updates are
      // one burst: every task file carries the burst's time as its mtime (published with it), so
      // the whole batch becomes due at once, replicationDelay later — the same 60 pushes the raw
      // loop starts at once. Without the common mtime the batch would trickle in while it is
      // written and the figure would measure the hooks.
      const burstAt = new Date();
      for (const s of sources) {
        await store.createMany(
          s.refs.flatMap((ref) =>
            DESTS.map((dest) => ({ project: s.project, refs: [ref], uri: `file://${join(dests, 'relay', dest)}/${s.project}.git`, remote: dest })),
          ),
          { mtimeOf: () => burstAt },
        );
      }
      const roundLogs = () => node.logs().slice(logsBefore);
      // Every URI pushed, not just as many pushes as URIs: a batch split in two (its tasks written
      // slower than its delay) pushes one URI twice, and the next round must not empty the
      // destinations under a push still running.
      let pushed = [];
      const pushedUris = () => new Set(pushed.map((line) => line.uri)).size;
      for (const deadline = Date.now() + 120_000; pushedUris() < uris; pushed = roundLogs().filter((line) => line.msg === 'pushed')) {
        if (Date.now() > deadline) throw new Error(`only ${pushedUris()} of ${uris} URIs pushed within 120 s`);
        await sleep(100);
      }
      await sleep(500); // a late extra push would show here
      pushed = roundLogs().filter((line) => line.msg === 'pushed');
      pushes = Math.max(pushes, pushed.length);
      if (round <= 0) {
        // warm-up; the floor's loop gets one unmeasured run too, as refrelay gets its bursts
        if (round === 0) await runFloor();
        continue;
      }
      const firstClaimAt = Date.parse(roundLogs().find((line) => line.msg === 'claimed').time);
      const lastPushAt = Date.parse(pushed.at(-1).time);
      relayRuns.push(lastPushAt - firstClaimAt);
      relayCpu.push(cpu.between(firstClaimAt, lastPushAt));

      // Raw loop: the same consolidated pushes (one per URI), same concurrency, no refrelay, and
      // no Node either: `xargs -P` starting git from a shell, the cheapest way to run them.
      fresh('raw');
      const jobs = DESTS.flatMap((dest) =>
        sources.map((s) =>
          [
            '-C',
            s.repo,
            'push',
            '-q',
            '--porcelain',
            '--',
            `file://${join(dests, 'raw', dest)}/${s.project}.git`,
            ...s.refs.map((ref) => `${ref}:${ref}`),
          ].join(' '),
        ),
      );
      writeFileSync(jobsFile, `${jobs.join('\n')}\n`);
      const started = performance.now();
      const machineBusy = machineSampler();
      await rawLoop(jobsFile, THREADS * DESTS.length);
      rawRuns.push(performance.now() - started);
      rawCpu.push(machineBusy());

      // The same loop written in Node (a pool of spawn calls), as a Node tool would push.
      fresh('raw');
      const nodeStarted = performance.now();
      await pool(
        sources.flatMap((s) => DESTS.map((dest) => ({ s, url: `file://${join(dests, 'raw', dest)}/${s.project}.git` }))),
        THREADS * DESTS.length,
        ({ s, url }) => pushAsync(s.repo, ['--porcelain', '--', url, ...s.refs.map((ref) => `${ref}:${ref}`)]),
      );
      nodeLoopRuns.push(performance.now() - nodeStarted);

      const floor = await runFloor();
      floorRuns.push(floor.ms);
      floorCpu.push(floor.cpuMs);
    }
  } finally {
    await floorWorker.close();
    cpu.stop();
    await node.stop();
  }
  const relayMs = median(relayRuns);
  const rawMs = median(rawRuns);
  const nodeLoopMs = median(nodeLoopRuns);
  const floorMs = median(floorRuns);

  // Naive hook: one push per update per destination, as each update happens. BENCH_FANOUT_NAIVE=0
  // leaves it out (it takes 1.5 minutes; A/B runs of the node do not need it).
  let naiveMs;
  if (process.env.BENCH_FANOUT_NAIVE !== '0') {
    fresh('naive');
    const naiveStarted = performance.now();
    for (const s of sources)
      for (const ref of s.refs)
        for (const dest of DESTS) await pushAsync(s.repo, ['--', `file://${join(dests, 'naive', dest)}/${s.project}.git`, `${ref}:${ref}`]);
    naiveMs = performance.now() - naiveStarted;
  }

  const pushRatio = pushes / uris;
  const floorRatio = relayMs / floorMs;
  const perPush = (pick) => {
    const values = relayCpu.filter((c) => c !== undefined).map((c) => pick(c) / uris);
    return values.length > 0 ? `${median(values).toFixed(1)} ms` : '?';
  };
  return {
    pass: pushRatio <= 1.1 && floorRatio <= 1.15,
    summary: `${updates} updates → ${pushes} pushes for ${uris} URIs (${pushRatio.toFixed(2)}×, target ≤ 1.1×); wall time ${floorRatio.toFixed(2)}× the store protocol's floor (target ≤ 1.15×), ${(relayMs / rawMs).toFixed(2)}× the raw push loop; CPU per push: node ${perPush((c) => c.nodeMs)}, its git ${perPush((c) => c.childrenMs)}`,
    details: [
      `medians of ${ROUNDS}: refrelay ${fmt(relayMs)} from its first claim of the burst (the batch due) to its last push, on a running node after ${WARM_UP_BURSTS} warm-up bursts; raw loop (\`xargs -P ${THREADS * DESTS.length} git push\`) ${fmt(rawMs)}`,
      `runs: refrelay ${relayRuns.map((ms) => ms.toFixed(0)).join(', ')} ms; raw ${rawRuns.map((ms) => ms.toFixed(0)).join(', ')} ms`,
      `the same pushes from a Node loop (spawn, ${THREADS * DESTS.length} at a time): median ${fmt(nodeLoopMs)} (${nodeLoopRuns.map((ms) => ms.toFixed(0)).join(', ')}); refrelay ${(relayMs / nodeLoopMs).toFixed(2)}× that`,
      `the store protocol's floor (the same pushes from a Node loop with only the protocol's file operations around each, on a worker thread: lock mkdir, the URI's waiting folder renamed in as the lease folder, owner record twice, the lease folder listed and a read per task, retire; no scheduling, logs or retry state): median ${fmt(floorMs)} (${floorRuns.map((ms) => ms.toFixed(0)).join(', ')}) = ${(floorMs / rawMs).toFixed(2)}× the raw loop, its process's CPU ${floorCpu.map((ms) => ms.toFixed(0)).join(', ')} ms; refrelay ${(relayMs / floorMs).toFixed(2)}× the floor`,
      `CPU time in those windows (both cores): refrelay's node ${relayCpu.map((c) => (c === undefined ? '?' : c.nodeMs.toFixed(0))).join(', ')} ms (schedstat), its git children ${relayCpu.map((c) => c?.childrenMs ?? '?').join(', ')} ms (reaped, 10 ms ticks), whole machine ${relayCpu.map((c) => c?.machineMs ?? '?').join(', ')} ms; raw loop, whole machine ${rawCpu.join(', ')} ms`,
      `CPU per push (medians): refrelay's node ${perPush((c) => c.nodeMs)}, the git it runs ${perPush((c) => c.childrenMs)}; the raw loop, whole machine ${(median(rawCpu) / uris).toFixed(1)} ms`,
      naiveMs === undefined
        ? 'naive per-update hook: not run (BENCH_FANOUT_NAIVE=0)'
        : `naive per-update hook: ${updates * DESTS.length} pushes in ${fmt(naiveMs)} = ${(naiveMs / relayMs).toFixed(1)}× refrelay's wall time`,
    ],
  };
}
