// Scale-out: 300 URIs whose destinations' pre-receive sleeps 200 ms. Three nodes sharing one
// store must deliver ≥ 2.5× the throughput of one node, each doing 33% ± 10 points of pushes.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStore } from '../../dist/store/task-store.js';
import { bareRepo, drainNodes, makeSource } from './cluster-util.mjs';
import { fmt, withTempDir, destinationsParent } from './util.mjs';

const THREADS = 4;

async function deliver(root, dests, label, uriCount, nodeIds) {
  const config = join(root, `${label}.config`);
  const store = join(root, `store-${label}`);
  writeFileSync(
    config,
    [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 100ms',
      '  randomDelay = 200ms',
      `  maxPushes = ${THREADS}`,
      '[remote "slow"]',
      `  url = ${join(dests, label)}/\${name}.git`,
      '  replicationDelay = 0',
      `  threads = ${THREADS}`,
    ].join('\n'),
  );
  const tasks = new TaskStore({ root: store, nodeId: 'hook' });
  for (let i = 0; i < uriCount; i++) {
    bareRepo(join(dests, label, `u${i}.git`), '0.2');
    await tasks.create({ project: `u${i}`, refs: ['refs/heads/main'], uri: `${join(dests, label)}/u${i}.git`, remote: 'slow' });
  }
  const started = performance.now();
  const logs = await drainNodes(config, nodeIds);
  const ms = performance.now() - started;
  const perNode = logs.map((lines) => lines.filter((line) => line.msg === 'pushed').length);
  return { ms, perNode };
}

export async function run({ quick }) {
  const uriCount = quick ? 60 : 300;
  return withTempDir('scaleout', (root) => withTempDir('scaleout-dests', (dests) => scaleOut(root, dests, uriCount), destinationsParent));
}

async function scaleOut(root, dests, uriCount) {
  for (let i = 0; i < uriCount; i++) {
    const { repo } = makeSource(root, `seed${i}`, 0);
    // One source per URI keeps pushes independent; reuse a single seed's objects via a rename.
    renameSync(repo, join(root, 'base', `u${i}.git`));
  }
  const one = await deliver(root, dests, 'one', uriCount, ['solo']);
  const three = await deliver(root, dests, 'three', uriCount, ['n1', 'n2', 'n3']);
  const speedup = one.ms / three.ms;
  const total = three.perNode.reduce((a, b) => a + b, 0);
  const shares = three.perNode.map((count) => (count / total) * 100);
  const balanced = shares.every((share) => Math.abs(share - 100 / 3) <= 10);
  return {
    pass: speedup >= 2.5 && balanced && total === uriCount,
    summary: `3 nodes deliver ${speedup.toFixed(2)}× the throughput of 1 node (target ≥ 2.5×); shares ${shares.map((s) => `${s.toFixed(0)}%`).join(' / ')} (target 33% ± 10)`,
    details: [
      `${uriCount} URIs, pre-receive sleeps 200 ms, threads ${THREADS} per node: 1 node ${fmt(one.ms)} (${((uriCount / one.ms) * 1000).toFixed(1)} pushes/s), 3 nodes ${fmt(three.ms)} (${((uriCount / three.ms) * 1000).toFixed(1)} pushes/s)`,
    ],
  };
}
