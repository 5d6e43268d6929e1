import { describe, expect, it } from 'vitest';
import { Distributor } from '../../../src/schedule/distributor.js';
import { preferredNode, preferredTurn } from '../../../src/schedule/preferred-node.js';
import { uriKey as keyOfUri } from '../../../src/task/task.js';
import { configOf, harness } from './scheduler-harness.js';

const keys = Array.from({ length: 20_000 }, (_, i) => keyOfUri(`ssh://mirror.example.com/p${i}.git`));
const nodes = Array.from({ length: 20 }, (_, i) => `node-${i + 1}`);

describe('preferred node (rendezvous hashing)', () => {
  it('gives every node its share of the URIs, whatever order the list is in', () => {
    const counts = new Map<string, number>();
    for (const key of keys) {
      const owner = preferredNode(key, nodes)!;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const node of nodes) expect(Math.abs((counts.get(node) ?? 0) / keys.length - 0.05)).toBeLessThan(0.01);
    expect(keys.slice(0, 100).map((key) => preferredNode(key, [...nodes].reverse()))).toEqual(keys.slice(0, 100).map((key) => preferredNode(key, nodes)));
    expect(preferredNode(keys[0]!, [])).toBeUndefined();
  });

  it('moves only the URIs of a node that leaves', () => {
    const without = nodes.filter((node) => node !== 'node-7');
    for (const key of keys) {
      const before = preferredNode(key, nodes);
      if (before !== 'node-7') expect(preferredNode(key, without)).toBe(before);
    }
  });
});

describe('preferred turn (new folders left unread for the preferred node)', () => {
  const config = configOf([
    'replication.distributionInterval=1s',
    'replication.randomDelay=2s',
    'remote.slow.url=/dest/slow/${name}.git',
    'remote.slow.replicationDelay=30s',
    'remote.fast.url=/dest/fast/${name}.git',
    'remote.fast.replicationDelay=10s',
  ]);
  const key = keyOfUri('/dest/fast/p.git');
  const other = nodes.find((node) => preferredNode(key, ['self', node]) === node)!;
  const mine = nodes.find((node) => preferredNode(key, ['self', node]) === 'self')!;

  it("lasts the soonest batching window and a handoff for a URI another node is preferred for; the handoff alone for one due here already; nothing for this node's own, nor for one it recovered", () => {
    const due = new Set<string>();
    const expedited = new Set<string>();
    const here = { isDue: (uri: string) => due.has(uri), isExpedited: (uri: string) => expedited.has(uri) };
    const turn = preferredTurn({ self: 'self', live: ['self', other].sort() }, config, here)!;
    expect(turn.turnMs(key)).toBe(10_000 + 1_000 + 2_000);
    due.add(key);
    expect(turn.turnMs(key)).toBe(1_000 + 2_000);
    expedited.add(key);
    expect(turn.turnMs(key)).toBeUndefined();
    expect(preferredTurn({ self: 'self', live: ['self', mine].sort() }, config, { isDue: () => true, isExpedited: () => false })!.turnMs(key)).toBeUndefined();
  });

  it('is none for a node alone, or without a configured remote', () => {
    const nothingKnown = { isDue: () => false, isExpedited: () => false };
    expect(preferredTurn({ self: 'self', live: ['self'] }, config, nothingKnown)).toBeUndefined();
    expect(preferredTurn(undefined, config, nothingKnown)).toBeUndefined();
    expect(preferredTurn({ self: 'self', live: ['self', other].sort() }, { ...config, remotes: [] }, nothingKnown)).toBeUndefined();
  });
});

describe('Distributor with live peers', () => {
  const config = [
    'replication.distributionInterval=1s',
    'replication.randomDelay=2s',
    'remote.mirror.url=/dest/mirror/${name}.git',
    'remote.mirror.replicationDelay=10s',
  ];

  /** A task queued for p, a URI another live node is preferred for, and this node's distributor. */
  async function queuedForAnotherNode(): Promise<{ h: ReturnType<typeof harness>; key: string; other: string; distributor: Distributor }> {
    const h = harness(config, { random: 0 });
    await h.enqueue('p', ['refs/heads/main']);
    const key = keyOfUri('/dest/mirror/p.git');
    const other = nodes.find((node) => preferredNode(key, ['self', node]) === node)!;
    const elsewhere = { self: 'self', live: ['self', other].sort() };
    return { h, key, other, distributor: new Distributor({ ...h.deps, membership: () => elsewhere }) };
  }

  it('takes a URI another live node is preferred for one distributionInterval + randomDelay after it came due, and its own at once', async () => {
    const { h, other, distributor } = await queuedForAnotherNode();
    h.clock.advance(10_000);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(2_999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);

    const mine = harness(config, { random: 0 });
    await mine.enqueue('p', ['refs/heads/main']);
    const here = { self: other, live: ['self', other].sort() };
    const preferredHere = new Distributor({ ...mine.deps, membership: () => here });
    mine.clock.advance(10_000);
    expect((await preferredHere.tick()).started).toBe(1);
  });

  it('takes a long overdue URI another live node is preferred for only one distributionInterval + randomDelay after it first learns it, so nodes that learn a change together do not all reach for it', async () => {
    const { h, distributor } = await queuedForAnotherNode();
    // An hour overdue when this node first sees it: its batch came due long ago.
    h.clock.advance(3_600_000);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(2_999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);
  });

  it("leaves a new folder of a URI another live node is preferred for unread during that node's turn, then takes it at the end of a handoff counted from when it first listed the folder", async () => {
    const h = harness(config, { random: 0 });
    const key = keyOfUri('/dest/mirror/p.git');
    const other = nodes.find((node) => preferredNode(key, ['self', node]) === node)!;
    const distributor = new Distributor({ ...h.deps, membership: () => ({ self: 'self', live: ['self', other].sort() }) });
    expect((await distributor.tick()).pendingUris).toBe(0);
    await h.enqueue('p', ['refs/heads/main']);

    // Its turn: the batching window (10 s), randomDelay (2 s) and one interval (1 s).
    const first = await distributor.tick();
    expect([first.pendingUris, first.unlearned, distributor.waitingUriCount()]).toEqual([1, 0, 0]);
    h.clock.advance(12_999);
    expect((await distributor.tick()).started).toBe(0);
    expect(distributor.waitingUriCount()).toBe(0);
    // Learned now; the handoff (3 s) counts from the first listing, so it is over already.
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);
  });

  it('takes a URI it recovered from a dead holder on its next pass, even one another live node is preferred for', async () => {
    const { h, key, distributor } = await queuedForAnotherNode();
    h.clock.advance(3_600_000);
    expect((await distributor.tick()).started).toBe(0);

    distributor.expedite(key);

    expect((await distributor.tick()).started).toBe(1);
  });

  it('learns at once, and takes on its next pass, a folder it put back in waiting/ from a dead holder, even for a URI another live node is preferred for', async () => {
    const h = harness(config, { random: 0 });
    const key = keyOfUri('/dest/mirror/p.git');
    const other = nodes.find((node) => preferredNode(key, ['self', node]) === node)!;
    const distributor = new Distributor({ ...h.deps, membership: () => ({ self: 'self', live: ['self', other].sort() }) });
    await distributor.tick();
    // As recovery puts a dead holder's tasks back: their mtimes are old, their batch due long ago.
    await h.enqueue('p', ['refs/heads/main']);
    h.clock.advance(3_600_000);

    distributor.expedite(key);

    expect((await distributor.tick()).started).toBe(1);
  });
});
