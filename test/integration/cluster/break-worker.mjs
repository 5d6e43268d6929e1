// One would-be breaker in its own process: for every "go" it spins to the shared instant, then
// races `breakStale` on the same lock as its peer, and reports the tombstone it got (or none).
const [lockModule, clockModule, randomModule, runningDir, nodeId] = process.argv.slice(2);
const { UriLocks } = await import(lockModule);
const { systemClock } = await import(clockModule);
const { systemRandom } = await import(randomModule);

const locks = new UriLocks({ runningDir, nodeId, host: 'test-host', pid: process.pid, clock: systemClock, random: systemRandom });

process.on('message', async (message) => {
  if (message?.type === 'stop') process.exit(0);
  if (message?.type !== 'go') return;
  while (Date.now() < message.startAt) {
    // Spin to the shared instant: a timer would let one process get well ahead.
  }
  try {
    const tombstone = await locks.breakStale(message.lockName, message.signature);
    process.send({ trial: message.trial, tombstone: tombstone ?? null });
  } catch (error) {
    process.send({ trial: message.trial, error: String(error?.stack ?? error) });
  }
});
process.send('ready');
