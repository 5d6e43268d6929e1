// One refrelay node in its own process: waits for "go", then enqueues the given updates
// through the built store so that several processes race on the same task keys.
const [storeModule, root, nodeId, seed, count, ...uris] = process.argv.slice(2);
const { TaskStore } = await import(storeModule);

const store = new TaskStore({ root, nodeId });
const tasks = [];
for (let i = 0; i < Number(count); i++) {
  for (const uri of uris) tasks.push({ project: 'platform/core', refs: [`refs/heads/branch-${i}`], uri, remote: 'mirror' });
}
// Each node walks the updates in its own order, so the winner of each key varies and
// nodes keep running into keys a peer is publishing at that moment.
let state = Number(seed) * 2654435761 + 1;
const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
for (let i = tasks.length - 1; i > 0; i--) {
  const j = Math.floor(next() * (i + 1));
  [tasks[i], tasks[j]] = [tasks[j], tasks[i]];
}

process.on('message', async (message) => {
  if (message?.type !== 'go') return;
  while (Date.now() < message.startAt) {
    // Spin to the shared instant: a timer would let the first process get well ahead.
  }
  try {
    const results = await store.createMany(tasks);
    process.send({ created: results.filter((result) => result.created).length, total: results.length }, () => process.exit(0));
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) }, () => process.exit(1));
  }
});
process.send('ready');
