import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { overlapsSeen, pushesReceived } from '../../support/destination.js';
import { isAlive, processesWith } from '../../support/processes.js';
import { readJson, storeDir, type RefrelayNode } from '../../support/refrelay-node.js';
import { namesIn, waitingTaskNames, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { hookPids, lockSnapshot, logTime, useCluster, type Cluster } from './cluster-fixture.js';

const { cluster } = useCluster();
const tempDir = useTempDirs();

const LOCK_STALE_MS = 2000;
const INTERVAL_MS = 200;
const RANDOM_DELAY_MS = 100;

/** Waits until one of `nodes` logged a claim; returns it (the holder) and the other ones. */
async function holderOf(nodes: RefrelayNode[], after = 0): Promise<{ holder: RefrelayNode; others: RefrelayNode[] }> {
  const holder = await waitUntil(
    'a node to claim the tasks',
    () => nodes.find((node) => node.logs().some((line) => line.msg === 'claimed' && logTime(line) >= after)),
    10_000,
  );
  return { holder, others: nodes.filter((node) => node !== holder) };
}

async function nodesBeating(c: Cluster, ...ids: string[]): Promise<void> {
  await waitUntil('every node to write its heartbeat', () => ids.every((id) => existsSync(join(c.store, 'nodes', `${id}.json`))), 10_000);
}

function nodeCounter(c: Cluster, id: string): number {
  return readJson<{ counter: number }>(join(c.store, 'nodes', `${id}.json`)).counter;
}

function messages(node: RefrelayNode): string[] {
  return node.logs().map((line) => line.msg);
}

/** The push lines a node logged under one lease (push ids are `<leaseId>.<n>`). */
function pushesUnder(node: RefrelayNode, leaseId: string): unknown[] {
  return node.logs().filter((line) => line.msg === 'pushed' && String(line.pushId).startsWith(`${leaseId}.`));
}

function expectCleanStore(c: Cluster): void {
  expect(waitingTaskNames(c.store)).toEqual([]);
  expect(namesIn(storeDir(c.store, 'running'))).toEqual([]);
  expect(namesIn(storeDir(c.store, 'failed'))).toEqual([]);
  expect(namesIn(join(c.store, 'uri-state'))).toEqual([]);
}

describe('stale URI lock takeover between running nodes', () => {
  it('kill -9 of the node pushing: the already running peer stops the orphaned git push, takes over no sooner than lockStale after the last heartbeat, and delivers every update within lockStale + interval + randomDelay + its push time + 1 s, with no overlapping push', async () => {
    const c = cluster({ label: 'refrelay-takeover-kill' });
    const pushSeconds = 3;
    c.setPushSleep(pushSeconds);
    const one = c.start('node-1');
    const two = c.start('node-2');
    await nodesBeating(c, 'node-1', 'node-2');
    await c.update('app', 'main');
    await c.update('app', 'feature');
    const { holder, others } = await holderOf([one, two]);
    const peer = others[0]!;
    await waitUntil("the holder's push inside the slow hook", () => hookPids(c.dest()).length === 1);
    // The holder publishes its git push's process group in the owner record right after spawning it.
    const owner = await waitUntil('pushPid in the owner record', () => {
      const found = lockSnapshot(c.store, c.lockName()).owner;
      return typeof found?.pushPid === 'number' ? found : undefined;
    });
    const orphanHook = hookPids(c.dest())[0]!;

    const killedAt = Date.now();
    holder.signal('SIGKILL');
    expect(await holder.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // The orphan lives on after its node's death until the peer stops it.
    expect(isAlive(orphanHook)).toBe(true);
    // The dead holder's last heartbeat: the record can no longer change.
    const lastRecord = lockSnapshot(c.store, c.lockName()).owner!;
    const lastBeatAt = Number(lastRecord.heartbeatAt);
    // Whichever updates the holder's claim did not take wait in waiting/ behind its lock.
    const claimedByHolder = Object.values(lockSnapshot(c.store, c.lockName()).entries).flat().length;
    expect(claimedByHolder).toBeGreaterThanOrEqual(1);

    await waitUntil('every update delivered', () => c.delivered(), 20_000, 10);
    const latencyMs = Date.now() - killedAt;
    // The store shows the push finished a moment before the node's log line reaches us.
    await peer.waitForLog((line) => line.msg === 'pushed', 5000);
    // Push time is what the peer's git pushes took (the 3 s hook plus git's own time, which a busy
    // machine stretches); 1 s is left for process scheduling.
    const pushMs = peer
      .logs()
      .filter((line) => line.msg === 'pushed')
      .reduce((sum, line) => sum + Number(line.durationMs), 0);
    const bound = LOCK_STALE_MS + INTERVAL_MS + RANDOM_DELAY_MS + pushMs + 1000;
    const takeover = peer.logs().find((line) => line.msg === 'took over a stale URI lock')!;
    const claimedAgain = peer.logs().find((line) => line.msg === 'claimed')!;
    console.info(
      `takeover latency: kill → takeover ${logTime(takeover) - killedAt} ms, → claimed ${logTime(claimedAgain) - killedAt} ms, ` +
        `→ delivered ${latencyMs} ms (bound ${bound} ms with ${pushMs} ms of pushing); the holder had claimed ${claimedByHolder} of 2 tasks`,
    );
    expect(pushMs).toBeGreaterThanOrEqual(pushSeconds * 1000);
    expect(latencyMs).toBeLessThanOrEqual(bound);
    // The takeover is recorded with the dead holder and every task its lease held; which batch a
    // task joined depends on when the holder's pass ran, so the count is read from the store.
    expect(takeover).toMatchObject({ lock: c.lockName(), formerNode: holder.nodeId, formerPid: holder.pid, tasks: claimedByHolder });
    // Staleness is an unmoving counter for lockStale: no takeover before lockStale has passed
    // since the last heartbeat was written (same machine, so the wall clocks agree).
    expect(logTime(takeover) - lastBeatAt).toBeGreaterThanOrEqual(LOCK_STALE_MS);

    await c.waitDelivered();
    // The orphaned push (git, receive-pack, hook) was stopped: it never landed, and nothing of it is left.
    expect(isAlive(orphanHook)).toBe(false);
    expect(isAlive(owner.pushPid as number)).toBe(false);
    expect(processesWith(c.dest())).toEqual([]);
    // Every push that started at the destination after the orphan's landed, and only those.
    expect(hookPids(c.dest())[0]).toBe(orphanHook);
    expect(pushesReceived(c.dest())).toBe(hookPids(c.dest()).length - 1);
    expect(overlapsSeen(c.dest())).toBe(0);
    expect(peer.logs().filter((line) => line.msg === 'pushed')).toHaveLength(pushesReceived(c.dest()));
    expectCleanStore(c);
    expect(peer.problems()).toEqual([]);
  });

  it("a node paused (SIGSTOP) past lockStale mid-push loses its lock; after SIGCONT it touches nothing of the peer's claim and queues its task again, and every update lands with no overlapping push", async () => {
    // The paused node's git child is not stopped by SIGSTOP: its short push (0.5 s) lands while its
    // node is frozen. The node then wakes up with a "successful" push to finish, holding a lease the
    // peer has broken meanwhile, while the peer is in the middle of its own (3 s) push of the same URI.
    const c = cluster({ label: 'refrelay-takeover-stop' });
    c.setPushSleep(0.5);
    const one = c.start('node-1');
    const two = c.start('node-2');
    await nodesBeating(c, 'node-1', 'node-2');
    await c.update('app', 'main');
    const { holder, others } = await holderOf([one, two]);
    const peer = others[0]!;
    await waitUntil("the holder's push inside the hook", () => hookPids(c.dest()).length === 1);
    holder.signal('SIGSTOP');
    const heldLease = lockSnapshot(c.store, c.lockName()).owner?.leaseId;
    expect(heldLease).toMatch(new RegExp(`^${holder.nodeId}\\.`));
    await waitUntil("the frozen node's git push to land", () => pushesReceived(c.dest()) === 1);

    // More work for the same URI arrives while the holder is frozen, and the next push is slow.
    c.setPushSleep(3);
    await c.update('app', 'second');
    const takeover = await peer.waitForLog((line) => line.msg === 'took over a stale URI lock', 10_000);
    expect(takeover).toMatchObject({ lock: c.lockName(), formerNode: holder.nodeId, formerPid: holder.pid, tasks: 1 });
    await waitUntil("the peer's push inside the hook", () => hookPids(c.dest()).length === 2);
    const peerHook = hookPids(c.dest())[1]!;
    const peerClaim = lockSnapshot(c.store, c.lockName());
    expect(peerClaim.owner?.nodeId).toBe(peer.nodeId);
    const peerLease = String(peerClaim.owner?.leaseId);
    expect(Object.keys(peerClaim.entries)).toEqual([peerLease]);
    expect(peerClaim.entries[peerLease]).toHaveLength(2);

    const beforeResume = nodeCounter(c, holder.nodeId);
    holder.signal('SIGCONT');
    // The resumed node runs again (its node heartbeat moves) while the peer's push is still going.
    await waitUntil('the resumed node to beat again', () => nodeCounter(c, holder.nodeId) >= beforeResume + 3, 5000);
    expect(isAlive(peerHook)).toBe(true);
    const during = lockSnapshot(c.store, c.lockName());
    expect(during.owner?.leaseId).toBe(peerLease);
    expect(during.entries).toEqual(peerClaim.entries);
    // Its push may have landed after the peer's (it cannot tell), so its task is queued again.
    expect(await holder.waitForLog((line) => line.msg === 'lost the URI lock after starting a push; its tasks are queued again', 10_000)).toMatchObject({
      tasks: 1,
    });

    await c.waitDelivered();
    await waitUntil('the peer to log its push', () => peer.logs().some((line) => line.msg === 'pushed'));
    expectCleanStore(c);
    expect(overlapsSeen(c.dest())).toBe(0);
    // The task queued again found the destination up to date: no third push reached it.
    expect(pushesReceived(c.dest())).toBe(2);
    // The frozen node's late "success" was fenced: it neither finished nor logged a push under its lease.
    expect(pushesUnder(holder, String(heldLease))).toEqual([]);
    const held = messages(holder);
    console.info(`resumed node logged: ${held.slice(held.indexOf('claimed')).join(' | ')}`);
    expect(peer.logs().find((line) => line.msg === 'claimed' && line.lease === peerLease)).toMatchObject({ tasks: 2 });
    expect(peer.problems()).toEqual([]);
    expect(holder.problems()).toEqual([]);
  });

  it("a node paused with its git push paused too: the peer kills the frozen push group, takes over, and the resumed node queues its task again without touching the peer's claim", async () => {
    // Here the holder's whole git process group is stopped as well, so its push is truly frozen in
    // flight (as on a host that stalls). The peer runs on the same host and SIGKILLs that group.
    const c = cluster({ label: 'refrelay-takeover-stop-git' });
    c.setPushSleep(2);
    const one = c.start('node-1');
    const two = c.start('node-2');
    await nodesBeating(c, 'node-1', 'node-2');
    await c.update('app', 'main');
    const { holder, others } = await holderOf([one, two]);
    const peer = others[0]!;
    const pushPid = await waitUntil('pushPid in the owner record', () => {
      const found = lockSnapshot(c.store, c.lockName()).owner?.pushPid;
      return typeof found === 'number' ? found : undefined;
    });
    await waitUntil("the holder's push inside the hook", () => hookPids(c.dest()).length === 1);
    const heldLease = String(lockSnapshot(c.store, c.lockName()).owner?.leaseId);
    holder.signal('SIGSTOP');
    process.kill(-pushPid, 'SIGSTOP');
    const frozenHook = hookPids(c.dest())[0]!;

    c.setPushSleep(3);
    await c.update('app', 'second');
    const takeover = await peer.waitForLog((line) => line.msg === 'took over a stale URI lock', 10_000);
    expect(takeover).toMatchObject({ formerNode: holder.nodeId, tasks: 1 });
    await waitUntil('the frozen push group to be killed', () => !isAlive(pushPid) && !isAlive(frozenHook), 2000);
    await waitUntil("the peer's push inside the hook", () => hookPids(c.dest()).length === 2);
    const peerClaim = lockSnapshot(c.store, c.lockName());
    expect(peerClaim.owner?.nodeId).toBe(peer.nodeId);

    const beforeResume = nodeCounter(c, holder.nodeId);
    holder.signal('SIGCONT');
    await waitUntil('the resumed node to beat again', () => nodeCounter(c, holder.nodeId) >= beforeResume + 3, 5000);
    expect(lockSnapshot(c.store, c.lockName()).entries).toEqual(peerClaim.entries);
    expect(lockSnapshot(c.store, c.lockName()).owner?.leaseId).toBe(peerClaim.owner?.leaseId);
    expect(await holder.waitForLog((line) => line.msg === 'lost the URI lock after starting a push; its tasks are queued again', 10_000)).toMatchObject({
      tasks: 1,
    });

    await c.waitDelivered();
    expectCleanStore(c);
    expect(overlapsSeen(c.dest())).toBe(0);
    // Only the peer's push landed: the frozen one died in its hook.
    expect(pushesReceived(c.dest())).toBe(1);
    expect(pushesUnder(holder, heldLease)).toEqual([]);
    expect(peer.problems()).toEqual([]);
    expect(holder.problems()).toEqual([]);
  });

  it('a node restarting after kill -9 recovers only its own claim, never the claim of a peer that is pushing', async () => {
    const c = cluster({ label: 'refrelay-takeover-restart', projects: ['app', 'lib'] });
    c.setPushSleep(4, 'app');
    c.setPushSleep(4, 'lib');
    await c.update('app', 'main');
    await c.update('lib', 'main');
    const one = c.start('node-1');
    const two = c.start('node-2');
    // threads = 1: each node pushes one URI at a time, so each ends up holding one of the two locks.
    await waitUntil('both URIs claimed', () => hookPids(c.dest('app')).length === 1 && hookPids(c.dest('lib')).length === 1, 10_000);
    const ownerOf = (project: string): string => String(lockSnapshot(c.store, c.lockName(project)).owner?.nodeId);
    expect(new Set([ownerOf('app'), ownerOf('lib')])).toEqual(new Set(['node-1', 'node-2']));
    const restarting = ownerOf('lib') === 'node-1' ? one : two;
    const live = restarting === one ? two : one;
    const liveClaim = lockSnapshot(c.store, c.lockName('app'));
    const liveHook = hookPids(c.dest('app'))[0]!;

    restarting.signal('SIGKILL');
    await restarting.exited;
    c.setPushSleep(0, 'lib');
    const again = c.start(restarting.nodeId);
    const recovered = await again.waitForLog((line) => line.msg === 'recovered own earlier claim', 10_000);
    expect(recovered).toMatchObject({ lock: c.lockName('lib'), formerPid: restarting.pid, tasks: 1 });
    // Several passes of the restarted node while the peer is still pushing.
    const counter = nodeCounter(c, restarting.nodeId);
    await waitUntil('a few passes of the restarted node', () => nodeCounter(c, restarting.nodeId) >= counter + 5, 5000);
    expect(isAlive(liveHook)).toBe(true);
    const now = lockSnapshot(c.store, c.lockName('app'));
    expect(now.owner?.leaseId).toBe(liveClaim.owner?.leaseId);
    expect(now.entries).toEqual(liveClaim.entries);

    await c.waitDelivered();
    expectCleanStore(c);
    await waitUntil('the live node to log its push', () => live.logs().some((line) => line.msg === 'pushed'));
    expect(live.logs().filter((line) => line.msg === 'pushed')).toHaveLength(1);
    expect(messages(live)).not.toContain('took over a stale URI lock');
    expect(messages(again)).not.toContain('took over a stale URI lock');
    expect(again.logs().filter((line) => line.msg === 'recovered own earlier claim')).toHaveLength(1);
    for (const project of ['app', 'lib']) expect(overlapsSeen(c.dest(project)), project).toBe(0);
    expect(pushesReceived(c.dest('app'))).toBe(1);
    expect(live.problems()).toEqual([]);
    expect(again.problems()).toEqual([]);
  });
});

describe('breaking a stale lock', () => {
  const root = fileURLToPath(new URL('../../..', import.meta.url));
  const built = (path: string): string => pathToFileURL(join(root, 'dist', path)).href;
  const worker = fileURLToPath(new URL('./break-worker.mjs', import.meta.url));

  interface Breaker {
    child: ChildProcess;
    ready: Promise<void>;
    next(): Promise<{ trial: number; tombstone: string | null; error?: string }>;
  }

  function startBreaker(runningDir: string, nodeId: string): Breaker {
    const child = fork(worker, [built('lock/uri-lock.js'), built('runtime/clock.js'), built('runtime/random.js'), runningDir, nodeId], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const queue: Array<{ trial: number; tombstone: string | null; error?: string }> = [];
    const waiters: Array<(value: { trial: number; tombstone: string | null; error?: string }) => void> = [];
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    child.on('message', (message: 'ready' | { trial: number; tombstone: string | null; error?: string }) => {
      if (message === 'ready') return markReady();
      const waiter = waiters.shift();
      if (waiter) waiter(message);
      else queue.push(message);
    });
    return {
      child,
      ready,
      next: () => {
        const queued = queue.shift();
        return queued ? Promise.resolve(queued) : new Promise((resolve) => waiters.push(resolve));
      },
    };
  }

  it('two processes racing breakStale on the same stale lock: exactly one gets a tombstone, holding the whole claim, in each of 200 trials', async () => {
    const runningDir = join(tempDir('refrelay-break-race'), 'running');
    mkdirSync(runningDir, { recursive: true });
    const lockName = 'a'.repeat(40);
    const breakers = [startBreaker(runningDir, 'node-a'), startBreaker(runningDir, 'node-b')];
    try {
      await Promise.all(breakers.map((breaker) => breaker.ready));
      const wins = [0, 0];
      for (let trial = 0; trial < 200; trial++) {
        // A lock whose holder died: owner record and a claim folder with one task.
        const lockDir = join(runningDir, lockName);
        const leaseId = `node-dead.${trial}`;
        mkdirSync(join(lockDir, leaseId), { recursive: true });
        writeFileSync(
          join(lockDir, leaseId, 'owner.json'),
          JSON.stringify({ version: 1, nodeId: 'node-dead', pid: 1, host: 'gone', leaseId, counter: 7, uri: '/x', acquiredAt: 0, heartbeatAt: 0 }),
        );
        writeFileSync(join(lockDir, leaseId, `${'b'.repeat(40)}.json`), '{}');
        const startAt = Date.now() + 15;
        for (const breaker of breakers) breaker.child.send({ type: 'go', trial, startAt, lockName, signature: `${leaseId}:7` });
        const results = await Promise.all(breakers.map((breaker) => breaker.next()));
        for (const result of results) {
          expect(result.error).toBeUndefined();
          expect(result.trial).toBe(trial);
        }
        const tombstones = results.map((result) => result.tombstone).filter((name): name is string => name !== null);
        expect(tombstones, `trial ${trial}`).toHaveLength(1);
        const winner = results.findIndex((result) => result.tombstone !== null);
        wins[winner]!++;
        expect(readdirSync(runningDir)).toEqual(tombstones);
        expect(tombstones[0]).toMatch(new RegExp(`^${lockName}\\.tomb\\.node-${winner === 0 ? 'a' : 'b'}\\.`));
        expect(readdirSync(join(runningDir, tombstones[0]!))).toEqual([leaseId]);
        expect(readdirSync(join(runningDir, tombstones[0]!, leaseId)).sort()).toEqual([`${'b'.repeat(40)}.json`, 'owner.json']);
        rmSync(join(runningDir, tombstones[0]!), { recursive: true });
      }
      console.info(`breakStale race: node-a won ${wins[0]}, node-b won ${wins[1]} of 200`);
      // Both processes won some trials: they really raced rather than one always arriving late.
      expect(Math.min(...wins)).toBeGreaterThan(0);
    } finally {
      for (const breaker of breakers) breaker.child.kill('SIGKILL');
    }
  });
});
