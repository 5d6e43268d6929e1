import { existsSync, readdirSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { overlapsSeen, pushesReceived } from '../../support/destination.js';
import { isAlive } from '../../support/processes.js';
import { readJson, storeDir, type RefrelayNode } from '../../support/refrelay-node.js';
import { namesIn, waitUntil, waitingTaskNames } from '../../support/store-files.js';
import { hookPids, lockSnapshot, logTime, useCluster, type Cluster } from './cluster-fixture.js';

const { cluster } = useCluster();

/** Every path in the store, except the dot-files a live writer replaces (temps, clock probes). */
function storeTree(store: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const path = join(dir, name);
      out.push(relative(store, path));
      if (statSync(path).isDirectory()) walk(path);
    }
  };
  walk(store);
  return out.sort();
}

function nodeRecord(c: Cluster, id: string): { pid: number; counter: number; stoppedAt: number | null } | undefined {
  const path = join(c.store, 'nodes', `${id}.json`);
  return existsSync(path) ? readJson(path) : undefined;
}

/** The real time at which this incarnation's node record first showed its pid. */
async function recordTakenAt(c: Cluster, node: RefrelayNode): Promise<number> {
  await waitUntil('the new node record', () => nodeRecord(c, node.nodeId)?.pid === node.pid, 10_000, 5);
  return Date.now();
}

function startedAt(node: RefrelayNode): number {
  return logTime(node.logs().find((line) => line.msg === 'refrelay node starting')!);
}

/** Starts node-1, queues an update and resolves once its push sits in the destination's slow hook. */
async function pushing(c: Cluster): Promise<RefrelayNode> {
  c.setPushSleep(4);
  const first = c.start('node-1');
  await c.update('app', 'main');
  await first.waitForLog((line) => line.msg === 'claimed', 10_000);
  await waitUntil('the push inside the slow hook', () => hookPids(c.dest()).length === 1);
  await waitUntil('pushPid in the owner record', () => typeof lockSnapshot(c.store, c.lockName()).owner?.pushPid === 'number');
  return first;
}

describe('one node id, one running daemon', () => {
  it('a second daemon with the id of a running one exits 1 with the exact message naming its pid and host, and touches nothing', async () => {
    const c = cluster({ label: 'refrelay-id-in-use' });
    const first = await pushing(c);
    // The running node writes its own history file at its next beat; the snapshot starts after that.
    await waitUntil("node-1's history file", () => existsSync(join(c.store, 'history', 'node-1.json')));
    const claim = lockSnapshot(c.store, c.lockName());
    const tree = storeTree(c.store);

    const second = c.start('node-1');
    expect(await second.exited).toEqual({ code: 1, signal: null });
    const match =
      /^refrelay: node id "node-1" is already in use by a running daemon \(pid (\d+) on host (\S+)\): give every node its own replication\.nodeId or --node-id\n$/.exec(
        second.stderr,
      );
    expect(match, second.stderr).not.toBeNull();
    expect(Number(match![1])).toBe(first.pid);
    expect(match![2]).toBe(hostname());
    // It looked, and left: the running daemon's claim, record and push are as they were.
    expect(second.logs().map((line) => line.msg)).toEqual(['refrelay node starting']);
    expect(storeTree(c.store)).toEqual(tree);
    const now = lockSnapshot(c.store, c.lockName());
    expect(now.owner?.leaseId).toBe(claim.owner?.leaseId);
    expect(now.entries).toEqual(claim.entries);
    expect(nodeRecord(c, 'node-1')?.pid).toBe(first.pid);
    expect(isAlive(hookPids(c.dest())[0]!)).toBe(true);
    expect(namesIn(storeDir(c.store, 'building'))).toEqual([]);

    c.setPushSleep(0);
    await c.waitDelivered();
    expect(first.child.exitCode).toBeNull();
    await waitUntil('the push logged', () => first.logs().some((line) => line.msg === 'pushed'));
    expect(first.logs().filter((line) => line.msg === 'pushed')).toHaveLength(1);
    expect(first.problems()).toEqual([]);
  });

  it('after a clean stop (SIGTERM) the same id starts at once and delivers what the stop handed back', async () => {
    const c = cluster({ label: 'refrelay-id-after-stop' });
    const first = await pushing(c);
    first.signal('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    // shutdownGrace (500 ms) aborted the push: its task is waiting again, the record says stopped.
    expect(waitingTaskNames(c.store)).toHaveLength(1);
    expect(nodeRecord(c, 'node-1')?.stoppedAt).toEqual(expect.any(Number));

    c.setPushSleep(0);
    const again = c.start('node-1');
    const tookMs = (await recordTakenAt(c, again)) - startedAt(again);
    console.info(`same id after SIGTERM: record taken ${tookMs} ms after start`);
    // Watching a record that might still be alive would take 2 × distributionInterval + 500 ms = 900 ms.
    expect(tookMs).toBeLessThan(600);
    await c.waitDelivered();
    await waitUntil('the push logged', () => again.logs().some((line) => line.msg === 'pushed'));
    expect(again.logs().filter((line) => line.msg === 'pushed')).toHaveLength(1);
    expect(overlapsSeen(c.dest())).toBe(0);
    expect(again.problems()).toEqual([]);
  });

  it('after kill -9 on this host the same id starts at once (its pid is dead), stops the orphaned push and recovers its claim', async () => {
    const c = cluster({ label: 'refrelay-id-after-kill' });
    const first = await pushing(c);
    const orphanHook = hookPids(c.dest())[0]!;
    const claim = lockSnapshot(c.store, c.lockName());
    first.signal('SIGKILL');
    await first.exited;
    expect(nodeRecord(c, 'node-1')).toMatchObject({ pid: first.pid, stoppedAt: null });
    expect(isAlive(orphanHook)).toBe(true);

    c.setPushSleep(0);
    const again = c.start('node-1');
    const recovered = await again.waitForLog((line) => line.msg === 'recovered own earlier claim', 10_000);
    const tookMs = logTime(recovered) - startedAt(again);
    console.info(`same id after kill -9: claim recovered ${tookMs} ms after start`);
    expect(tookMs).toBeLessThan(600);
    expect(recovered).toMatchObject({ lock: c.lockName(), formerNode: 'node-1', formerPid: first.pid, tasks: 1 });
    expect(
      Object.values(claim.entries)
        .flat()
        .filter((name) => name !== 'owner.json'),
    ).toHaveLength(1);
    expect(isAlive(orphanHook)).toBe(false);

    await c.waitDelivered();
    expect(pushesReceived(c.dest())).toBe(1);
    expect(overlapsSeen(c.dest())).toBe(0);
    expect(namesIn(storeDir(c.store, 'running'))).toEqual([]);
    expect(again.problems()).toEqual([]);
  });
});
