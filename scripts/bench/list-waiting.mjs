// Listing 100,000 waiting tasks with a warm parse cache vs a bare readdir of the same folder.
// Target: at most 2×.
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TaskStore } from '../../dist/store/task-store.js';
import { taskKey, encodeTask } from '../../dist/task/task.js';
import { median, withTempDir, fmt } from './util.mjs';

export async function run({ quick }) {
  const count = quick ? 10_000 : 100_000;
  return withTempDir('list', async (dir) => {
    const waiting = join(dir, 'ref-updates', 'waiting');
    mkdirSync(waiting, { recursive: true });
    for (let i = 0; i < count; i++) {
      const task = { project: `p${i % 500}`, refs: [`refs/heads/b${i}`], uri: `file:///dest/p${i % 500}.git`, remote: 'r' };
      writeFileSync(join(waiting, `${taskKey(task)}.json`), encodeTask(task));
    }
    const store = new TaskStore({ root: dir, nodeId: 'bench' });
    const coldStart = performance.now();
    const first = await store.listWaiting();
    const cold = performance.now() - coldStart;
    if (first.length !== count) throw new Error(`listed ${first.length}, expected ${count}`);
    const bare = [];
    const cached = [];
    for (let round = 0; round < 7; round++) {
      let t = performance.now();
      await readdir(waiting);
      bare.push(performance.now() - t);
      t = performance.now();
      await store.listWaiting();
      cached.push(performance.now() - t);
    }
    const ratio = median(cached) / median(bare);
    return {
      pass: ratio <= 2,
      summary: `listWaiting (warm cache) = ${ratio.toFixed(2)}× a bare readdir of ${count.toLocaleString('en')} files (target ≤ 2×)`,
      details: [`median of 7: readdir ${fmt(median(bare))}, listWaiting ${fmt(median(cached))}; first (cold parse) listing ${fmt(cold)}`],
    };
  });
}
