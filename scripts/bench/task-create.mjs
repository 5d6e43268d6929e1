// In-process task creation with fsync vs a raw loop of the same syscalls: write temp + fsync +
// link + unlink, plus the fsync of waiting/ that makes the new link itself durable on a local
// filesystem (refrelay does it; without it a power cut can drop an acknowledged task).
// Target: refrelay ≥ 70% of the raw loop's throughput. The loop without the directory fsync is
// reported too, for reference.
import { mkdirSync } from 'node:fs';
import { link, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskStore } from '../../dist/store/task-store.js';
import { median, withTempDir, fmt } from './util.mjs';

async function rawLoop(dir, count, syncDirectory) {
  const building = join(dir, 'building');
  const waiting = join(dir, 'waiting');
  mkdirSync(building, { recursive: true });
  mkdirSync(waiting, { recursive: true });
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const body = `{"version":1,"project":"p${i % 20}","refs":["refs/heads/b${i}"],"uri":"file:///dest/p.git","remote":"r"}\n`;
    const temp = join(building, `${i}.tmp`);
    const handle = await open(temp, 'wx');
    await handle.writeFile(body);
    await handle.sync();
    await handle.close();
    await link(temp, join(waiting, `${i}.json`));
    await unlink(temp);
    if (syncDirectory) {
      const dirHandle = await open(waiting, 'r');
      await dirHandle.sync();
      await dirHandle.close();
    }
  }
  return performance.now() - started;
}

async function storeLoop(dir, count) {
  const store = new TaskStore({ root: dir, nodeId: 'bench' });
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await store.create({ project: `p${i % 20}`, refs: [`refs/heads/b${i}`], uri: 'file:///dest/p.git', remote: 'r' });
  }
  return performance.now() - started;
}

export async function run({ quick }) {
  const count = quick ? 300 : 2000;
  const raw = [];
  const rawNoDirSync = [];
  const ours = [];
  for (let round = 0; round < 3; round++) {
    raw.push(await withTempDir('raw', (dir) => rawLoop(dir, count, true)));
    rawNoDirSync.push(await withTempDir('raw', (dir) => rawLoop(dir, count, false)));
    ours.push(await withTempDir('store', (dir) => storeLoop(dir, count)));
  }
  const ratio = median(raw) / median(ours);
  return {
    pass: ratio >= 0.7,
    summary: `refrelay create = ${(ratio * 100).toFixed(0)}% of the raw syscall loop's throughput (target ≥ 70%)`,
    details: [
      `${count} tasks, median of 3: raw ${fmt(median(raw))} (${((count / median(raw)) * 1000).toFixed(0)}/s), refrelay ${fmt(median(ours))} (${((count / median(ours)) * 1000).toFixed(0)}/s)`,
      `raw loop without the directory fsync: ${fmt(median(rawNoDirSync))} (${((count / median(rawNoDirSync)) * 1000).toFixed(0)}/s); refrelay = ${((median(rawNoDirSync) / median(ours)) * 100).toFixed(0)}% of it`,
    ],
  };
}
