// Backlog over sshfs: start → first claim of a node whose store is an sshfs mount that caches
// directories and attributes for 3 s (as the chaos test mounts it: our stand-in for NFS). The
// tasks are written into the store on local disk (ten per URI, backdated an hour, as in
// backlog.mjs), then a real sshd on 127.0.0.1 serves it to the mount. Sizes:
// BENCH_BACKLOG_SSHFS_SIZES (default 10,000 and 100,000 tasks; --quick: 10,000).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Processes, missingPrerequisites, mountSshfs, startSshd } from '../chaos/infra.mjs';
import { makeProjects, waitFor, writeConfig, writeTasks } from './backlog.mjs';
import { bin, startNode } from './cluster-util.mjs';
import { destinationsParent, fmt, withTempDir } from './util.mjs';

const TASKS_PER_URI = 10;
const CACHE_S = 3;

function sizes(quick) {
  if (process.env.BENCH_BACKLOG_SSHFS_SIZES) return process.env.BENCH_BACKLOG_SSHFS_SIZES.split(',').map(Number);
  return quick ? [10_000] : [10_000, 100_000];
}

async function firstClaimOverSshfs(taskCount) {
  return withTempDir('backlog-sshfs', (root) =>
    withTempDir(
      'backlog-sshfs-dests',
      async (dests) => {
        const store = join(root, 'store');
        const refs = makeProjects(root, taskCount / TASKS_PER_URI);
        const localConfig = join(root, 'local.config');
        writeConfig(localConfig, { store, root, dests, replicationDelay: 0 });
        if (spawnSync(process.execPath, [bin, 'init', '--config', localConfig]).status !== 0) throw new Error('refrelay init failed');
        mkdirSync(dests, { recursive: true });
        writeTasks(store, dests, taskCount / TASKS_PER_URI, refs);
        const processes = new Processes(join(root, 'run'));
        try {
          const sshd = await startSshd(processes, join(root, 'sshd'));
          const mount = join(root, 'mnt');
          await mountSshfs(processes, sshd, store, mount, `dcache_timeout=${CACHE_S},attr_timeout=${CACHE_S},entry_timeout=${CACHE_S}`);
          const config = join(root, 'sshfs.config');
          writeConfig(config, { store: mount, root, dests, replicationDelay: 0 });
          const started = Date.now();
          const node = startNode(config, 'bench-sshfs');
          try {
            await waitFor('the first claim', () => node.logs().find((line) => line.msg === 'claimed'), 600_000);
            return { taskCount, firstClaimMs: Date.now() - started };
          } finally {
            await node.stop();
          }
        } finally {
          await processes.cleanup();
        }
      },
      destinationsParent,
    ),
  );
}

export async function run({ quick }) {
  const missing = missingPrerequisites();
  if (missing !== undefined) return { pass: true, summary: `skipped: ${missing}`, details: [] };
  const results = [];
  for (const size of sizes(quick)) results.push(await firstClaimOverSshfs(size));
  const at100k = results.find((r) => r.taskCount === 100_000);
  return {
    pass: at100k === undefined || at100k.firstClaimMs <= 10_000,
    summary:
      `start → first claim on sshfs with ${CACHE_S} s caches` + (at100k === undefined ? '' : ` at 100,000 tasks: ${fmt(at100k.firstClaimMs)} (target ≤ 10 s)`),
    details: results.map(
      (r) =>
        `${r.taskCount.toLocaleString('en-US')} tasks (${(r.taskCount / TASKS_PER_URI).toLocaleString('en-US')} URIs): start → first claim ${fmt(r.firstClaimMs)}`,
    ),
  };
}
