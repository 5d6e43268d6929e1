// Fan-out of 1,000 ref updates over 20 projects to 3 file:// destinations.
// Targets: pushes ≤ 1.1× the URIs touched; wall time ≤ 1.25× a raw `git push` loop doing the
// same consolidated pushes at the same concurrency. Also reported: a naive hook that pushes
// every update to every destination as it happens.
import { join } from 'node:path';
import { TaskStore } from '../../dist/store/task-store.js';
import { bareRepo, makeSource, pool, pushAsync, startNode } from './cluster-util.mjs';
import { fmt, median, withTempDir } from './util.mjs';
import { writeFileSync } from 'node:fs';

const DESTS = ['dr', 'mirror', 'ci'];
const THREADS = 2;

export async function run({ quick }) {
  const projects = quick ? 5 : 20;
  const perProject = quick ? 20 : 50;
  return withTempDir('fanout', async (root) => {
    const sources = [];
    for (let p = 0; p < projects; p++) sources.push({ project: `p${p}`, ...makeSource(root, `p${p}`, perProject) });
    const updates = sources.reduce((n, s) => n + s.refs.length, 0);
    const uris = projects * DESTS.length;
    const fresh = (label) => {
      for (const dest of DESTS) for (const s of sources) bareRepo(join(root, label, dest, `${s.project}.git`));
    };

    // refrelay: every update queued first (as hooks would), then one node drains. Interleaved
    // with the raw loop, three rounds each, medians compared: this machine's disk is noisy.
    const relayRuns = [];
    const processRuns = [];
    const rawRuns = [];
    let pushes = 0;
    for (let round = 0; round < 3; round++) {
      const label = `relay${round}`;
      fresh(label);
      const config = join(root, `${label}.config`);
      writeFileSync(config, [
        '[replication]', `  storePath = ${join(root, `store${round}`)}`, `  basePath = ${join(root, 'base')}`,
        '  distributionInterval = 100ms', '  randomDelay = 0', '  httpListen = off', `  maxPushes = ${THREADS * DESTS.length}`,
        ...DESTS.flatMap((dest) => [`[remote "${dest}"]`, `  url = file://${join(root, label, dest)}/\${name}.git`, '  replicationDelay = 6s', `  threads = ${THREADS}`]),
      ].join('\n'));
      // As in production, the node runs while the hooks queue the updates. The 1,000 updates are
      // one burst: every task file carries the burst's time as its mtime (published with it), so
      // the whole batch becomes due at once, replicationDelay later — the same 60 pushes the raw
      // loop starts at once. Writing 3,000 files takes about a second here; without the common
      // mtime the batch would trickle in over that second and the figure would measure the hooks.
      const node = startNode(config, 'bench-1');
      await new Promise((resolve) => setTimeout(resolve, 500));
      const store = new TaskStore({ root: join(root, `store${round}`), nodeId: 'hook' });
      const burstAt = new Date();
      for (const s of sources) {
        await store.createMany(s.refs.flatMap((ref) => DESTS.map((dest) => ({ project: s.project, refs: [ref], uri: `file://${join(root, label, dest)}/${s.project}.git`, remote: dest }))), { mtimeOf: () => burstAt });
      }
      const uriCount = sources.length * DESTS.length;
      let pushed = [];
      for (const deadline = Date.now() + 120_000; pushed.length < uriCount; pushed = node.logs().filter((line) => line.msg === 'pushed')) {
        if (Date.now() > deadline) throw new Error(`only ${pushed.length} of ${uriCount} pushes within 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await new Promise((resolve) => setTimeout(resolve, 500)); // a late extra push would show here
      pushed = node.logs().filter((line) => line.msg === 'pushed');
      await node.stop();
      const claims = node.logs().filter((line) => line.msg === 'claimed');
      relayRuns.push(Date.parse(pushed.at(-1).time) - Date.parse(claims[0].time));
      processRuns.push(Date.parse(pushed.at(-1).time) - Date.parse(node.logs()[0].time));
      pushes = Math.max(pushes, pushed.length);

      // Raw loop: the same consolidated pushes (one per URI), same concurrency, no refrelay.
      const rawLabel = `raw${round}`;
      fresh(rawLabel);
      const jobs = DESTS.flatMap((dest) => sources.map((s) => ({ s, url: `file://${join(root, rawLabel, dest)}/${s.project}.git` })));
      const started = performance.now();
      await pool(jobs, THREADS * DESTS.length, ({ s, url }) => pushAsync(s.repo, ['--porcelain', '--', url, ...s.refs.map((ref) => `${ref}:${ref}`)]));
      rawRuns.push(performance.now() - started);
    }
    const relayMs = median(relayRuns);
    const processMs = median(processRuns);
    const rawMs = median(rawRuns);

    // Naive hook: one push per update per destination, as each update happens.
    fresh('naive');
    const naiveStarted = performance.now();
    for (const s of sources) for (const ref of s.refs) for (const dest of DESTS) await pushAsync(s.repo, ['--', `file://${join(root, 'naive', dest)}/${s.project}.git`, `${ref}:${ref}`]);
    const naiveMs = performance.now() - naiveStarted;

    const pushRatio = pushes / uris;
    const wallRatio = relayMs / rawMs;
    return {
      pass: pushRatio <= 1.1 && wallRatio <= 1.25,
      summary: `${updates} updates → ${pushes} pushes for ${uris} URIs (${pushRatio.toFixed(2)}×, target ≤ 1.1×); wall time ${wallRatio.toFixed(2)}× the raw consolidated push loop (target ≤ 1.25×)`,
      details: [
        `medians of 3: refrelay ${fmt(relayMs)} from its first claim (the batch due) to its last push; raw loop ${fmt(rawMs)} at ${THREADS * DESTS.length} concurrent pushes (node start to last push: ${fmt(processMs)}, including replicationDelay)`,
        `runs: refrelay ${relayRuns.map((ms) => ms.toFixed(0)).join(", ")} ms; raw ${rawRuns.map((ms) => ms.toFixed(0)).join(", ")} ms`,
      `naive per-update hook: ${updates * DESTS.length} pushes in ${fmt(naiveMs)} = ${(naiveMs / relayMs).toFixed(1)}× refrelay's wall time`,
      ],
    };
  });
}
