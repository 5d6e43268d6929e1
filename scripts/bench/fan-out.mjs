// Fan-out of 1,000 ref updates over 20 projects to 3 file:// destinations.
// Targets: pushes ≤ 1.1× the URIs touched; wall time ≤ 1.25× a raw `git push` loop doing the
// same consolidated pushes at the same concurrency. Also reported: a naive hook that pushes
// every update to every destination as it happens.
import { join } from 'node:path';
import { TaskStore } from '../../dist/store/task-store.js';
import { bareRepo, drainNodes, makeSource, pool, pushAsync } from './cluster-util.mjs';
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
        '  distributionInterval = 100ms', '  randomDelay = 0',
        ...DESTS.flatMap((dest) => [`[remote "${dest}"]`, `  url = file://${join(root, label, dest)}/\${name}.git`, '  replicationDelay = 0', `  threads = ${THREADS}`]),
      ].join('\n'));
      const store = new TaskStore({ root: join(root, `store${round}`), nodeId: 'hook' });
      for (const s of sources) {
        for (const ref of s.refs) {
          await store.createMany(DESTS.map((dest) => ({ project: s.project, refs: [ref], uri: `file://${join(root, label, dest)}/${s.project}.git`, remote: dest })));
        }
      }
      let started = performance.now();
      const [logs] = await drainNodes(config, ['bench-1']);
      processRuns.push(performance.now() - started);
      // A production node is already running: its delivery time starts at its start-up log line
      // (config loaded, store opened), not at the exec of a fresh Node.js process.
      const startLine = logs.find((line) => line.msg === 'refrelay node starting');
      const pushed = logs.filter((line) => line.msg === 'pushed');
      relayRuns.push(Date.parse(pushed.at(-1).time) - Date.parse(startLine.time));
      pushes = Math.max(pushes, pushed.length);

      // Raw loop: the same consolidated pushes (one per URI), same concurrency, no refrelay.
      const rawLabel = `raw${round}`;
      fresh(rawLabel);
      const jobs = DESTS.flatMap((dest) => sources.map((s) => ({ s, url: `file://${join(root, rawLabel, dest)}/${s.project}.git` })));
      started = performance.now();
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
        `medians of 3: refrelay node ${fmt(relayMs)} from its start-up line to its last push (${fmt(processMs)} for the whole \`daemon --drain\` process), raw loop ${fmt(rawMs)} at ${THREADS * DESTS.length} concurrent pushes`,
        `runs: refrelay ${relayRuns.map((ms) => ms.toFixed(0)).join(", ")} ms; raw ${rawRuns.map((ms) => ms.toFixed(0)).join(", ")} ms`,
      `naive per-update hook: ${updates * DESTS.length} pushes in ${fmt(naiveMs)} = ${(naiveMs / relayMs).toFixed(1)}× refrelay's wall time`,
      ],
    };
  });
}
