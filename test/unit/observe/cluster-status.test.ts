import { describe, expect, it } from 'vitest';
import { formatOffset, formatStatus } from '../../../src/cli/format-status.js';
import { collectClusterStatus } from '../../../src/observe/cluster-status.js';
import type { RunningLock } from '../../../src/store/store-types.js';
import { TaskStore } from '../../../src/store/task-store.js';
import { uriKey } from '../../../src/task/task.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';
import { FakeClock } from '../../support/fake-clock.js';
import { ROOT, configOf } from '../schedule/scheduler-harness.js';

// Alive while the record was replaced within 3 × 1s + 8s = 11 s of store time; warn above 8s / 4 = 2 s.
const config = configOf(['replication.distributionInterval=1s', 'replication.lockStale=8s', 'remote.mirror.url=/dest/${name}.git']);

function setup(): { fs: MemoryStoreFs; clock: FakeClock; store: TaskStore; writeNode(id: string, mtimeMs: number, fields?: Record<string, unknown>): void } {
  const clock = new FakeClock();
  const fs = new MemoryStoreFs(() => clock.now());
  const store = new TaskStore({ root: ROOT, nodeId: 'status', fs, clock });
  fs.mkdirSync(`${ROOT}/nodes`);
  return {
    fs,
    clock,
    store,
    writeNode(id, mtimeMs, fields = {}) {
      const path = `${ROOT}/nodes/${id}.json`;
      fs.writeRaw(path, JSON.stringify({ version: 1, nodeId: id, pid: 100, host: 'h1', counter: 5, clockOffsetMs: 0, stoppedAt: null, ...fields }));
      fs.setMtime(path, mtimeMs);
    },
  };
}

describe('status: nodes', () => {
  it('judges each node alive, stale or stopped by its record mtime on the store clock, and flags clock offsets above lockStale / 4', async () => {
    const { clock, store, writeNode } = setup();
    // The store's clock runs 30 s ahead of this machine's: ages must be measured on the store's.
    const storeNow = clock.now() + 30_000;
    writeNode('node-a', storeNow - 1000);
    writeNode('node-b', storeNow - 11_001);
    writeNode('node-c', storeNow - 11_000, { clockOffsetMs: 2001 });
    writeNode('node-d', storeNow - 500, { clockOffsetMs: -2000 });
    writeNode('node-e', storeNow - 60_000, { stoppedAt: 1, clockOffsetMs: -600_000 });
    writeNode('node-f', storeNow - 100, { clockOffsetMs: null });

    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 30_000 });
    expect(status.storeClockOffsetMs).toBe(30_000);
    expect(status.nodes.map(({ record: _record, ...node }) => node)).toEqual([
      { nodeId: 'node-a', state: 'alive', lastBeatAgeMs: 1000, clockOffsetMs: 0, clockWarning: false, spooledTasks: 0 },
      { nodeId: 'node-b', state: 'stale', lastBeatAgeMs: 11_001, clockOffsetMs: 0, clockWarning: false, spooledTasks: 0 },
      { nodeId: 'node-c', state: 'alive', lastBeatAgeMs: 11_000, clockOffsetMs: 2001, clockWarning: true, spooledTasks: 0 },
      { nodeId: 'node-d', state: 'alive', lastBeatAgeMs: 500, clockOffsetMs: -2000, clockWarning: false, spooledTasks: 0 },
      { nodeId: 'node-e', state: 'stopped', lastBeatAgeMs: 60_000, clockOffsetMs: -600_000, clockWarning: true, spooledTasks: 0 },
      { nodeId: 'node-f', state: 'alive', lastBeatAgeMs: 100, clockOffsetMs: null, clockWarning: false, spooledTasks: 0 },
    ]);
    expect(status.nodes[0]!.record).toMatchObject({ nodeId: 'node-a', pid: 100, host: 'h1' });

    const rows = formatStatus(status).split('\n');
    const header = rows.findIndex((row) => row.startsWith('NODE '));
    expect(rows[header]).toMatch(/^NODE\s+STATE\s+LAST BEAT\s+HOST\s+PID\s+CLOCK$/);
    expect(rows.slice(header + 1, header + 7).map((row) => row.split(/\s{2,}/))).toEqual([
      ['node-a', 'alive', '1s ago', 'h1', '100', '+0.0s'],
      ['node-b', 'stale', '11s ago', 'h1', '100', '+0.0s'],
      ['node-c', 'alive', '11s ago', 'h1', '100', '! clock off by +2.0s'],
      ['node-d', 'alive', '0s ago', 'h1', '100', '-2.0s'],
      ['node-e', 'stopped', '1m00s ago', 'h1', '100', '! clock off by -10m00s'],
      ['node-f', 'alive', '0s ago', 'h1', '100', '-'],
    ]);
    expect(formatStatus(status)).not.toContain('store clock not measurable');

    // On a terminal the same rows in boxed tables (cli-table3).
    const boxed = formatStatus(status, 'boxed');
    expect(boxed).toMatch(/│ NODE\s+│ STATE\s+│ LAST BEAT\s+│ HOST │ PID\s+│ CLOCK\s+│/);
    expect(boxed).toMatch(/│ node-c\s+│ alive\s+│ 11s ago\s+│ h1\s+│ 100\s+│ ! clock off by \+2\.0s\s+│/);
    expect(boxed.split('\n').filter((row) => row.startsWith('┌'))).toHaveLength(2); // the queue and the nodes
  });

  it('shows an alive node\'s "store not writable" with its errno and since when, not a stale node\'s, and not a malformed one', async () => {
    const { clock, store, writeNode } = setup();
    const failing = { code: 'ENOSPC', sinceAt: Date.UTC(2026, 0, 1, 12, 0, 0), failures: 7, lastError: 'claim failed (ENOSPC) at /store/ref-updates/waiting' };
    writeNode('node-a', clock.now() - 1000, { storeNotWritable: failing });
    writeNode('node-b', clock.now() - 60_000, { storeNotWritable: failing });
    writeNode('node-c', clock.now() - 1000, { storeNotWritable: { code: 7 } });

    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 });

    expect(status.nodes.map((node) => node.storeNotWritable)).toEqual([failing, undefined, undefined]);
    expect(
      formatStatus(status)
        .split('\n')
        .filter((row) => row.startsWith('!')),
    ).toEqual([
      '! node-a: store not writable (ENOSPC) since 2026-01-01T12:00:00.000Z, 7 failures in a row: claim failed (ENOSPC) at /store/ref-updates/waiting',
    ]);
  });

  it("prints a node record's text without its control characters, and a time no Date can hold as -", async () => {
    const { clock, store, writeNode } = setup();
    const failing = { code: 'EIO', sinceAt: 1e20, failures: 1, lastError: 'gone\u001b[2J\nforged line' };
    writeNode('node-a', clock.now() - 1000, { host: 'h\u001b]0;x\u0007', storeNotWritable: failing });
    const text = formatStatus(await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 }));
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(text).toContain('h\\u001b]0;x\\u0007');
    expect(text.split('\n').filter((row) => row.startsWith('!'))).toEqual([
      '! node-a: store not writable (EIO) since -, 1 failures in a row: gone\\u001b[2J forged line',
    ]);
  });

  it('shows the tasks each node reports spooled on its machine in a SPOOLED column, only while there are any, and ignores a value that is no count', async () => {
    const { clock, store, writeNode } = setup();
    writeNode('node-a', clock.now() - 1000, { spooled: 3 });
    writeNode('node-b', clock.now() - 1000, { spooled: 'lots' });
    writeNode('node-c', clock.now() - 1000, { spooled: -2 });
    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 });
    expect(status.nodes.map((node) => [node.nodeId, node.spooledTasks])).toEqual([
      ['node-a', 3],
      ['node-b', 0],
      ['node-c', 0],
    ]);
    const rows = formatStatus(status).split('\n');
    const header = rows.findIndex((row) => row.startsWith('NODE '));
    expect(rows[header]).toMatch(/^NODE\s+STATE\s+LAST BEAT\s+HOST\s+PID\s+CLOCK\s+SPOOLED$/);
    expect(rows.slice(header + 1, header + 4).map((row) => row.split(/\s{2,}/).at(-1))).toEqual(['3', '0', '0']);

    writeNode('node-a', clock.now() - 500);
    const none = formatStatus(await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 }));
    expect(none).not.toContain('SPOOLED');
  });

  it('falls back to the local clock when the store clock could not be measured (read-only store), and says so', async () => {
    const { clock, store, writeNode } = setup();
    writeNode('node-a', clock.now() - 11_001);
    writeNode('node-b', clock.now() - 2000);
    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: null });
    expect(status.storeClockOffsetMs).toBeNull();
    expect(status.nodes.map((node) => [node.nodeId, node.state, node.lastBeatAgeMs])).toEqual([
      ['node-a', 'stale', 11_001],
      ['node-b', 'alive', 2000],
    ]);
    expect(formatStatus(status)).toContain("(store clock not measurable here: node ages use this machine's clock)");
  });

  it('skips records that are not node records and says when no node has reported', async () => {
    const { fs, clock, store } = setup();
    fs.writeRaw(`${ROOT}/nodes/junk.json`, '{not json');
    fs.writeRaw(`${ROOT}/nodes/other.json`, '{"hello":1}');
    fs.writeRaw(`${ROOT}/nodes/.node-x.abc.tmp`, '{}');
    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 });
    expect(status.nodes).toEqual([]);
    expect(formatStatus(status)).toContain('nodes: none has reported yet');
  });

  it('formats offsets with their sign, seconds with one decimal under a minute', () => {
    expect([0, 40, -1234, 59_949, 59_999, 600_000, -3_725_000].map(formatOffset)).toEqual(['+0.0s', '+0.0s', '-1.2s', '+59.9s', '+59s', '+10m00s', '-1h02m']);
    // The sign comes after rounding: a clock a few ms behind is not shown as "-0.0s".
    expect([-0, -3, -49, -50, -0.4].map(formatOffset)).toEqual(['+0.0s', '+0.0s', '+0.0s', '-0.1s', '+0.0s']);
  });
});

describe('status: open host circuits', () => {
  it('lists the circuits live nodes published, with the wait to the next probe counted from now on the store clock', async () => {
    const { clock, store, writeNode } = setup();
    const storeNow = clock.now();
    // node-a beat 2 s ago; at its beat the probe was 32 s away on its clock: 30 s from now.
    writeNode('node-a', storeNow - 2000, {
      beatAt: 5_000_000,
      circuits: [
        {
          host: 'ssh://dead.example.com',
          state: 'open',
          trips: 3,
          nextProbeAt: 5_032_000,
          lastError: 'ssh: connect to host dead.example.com port 22: Connection refused',
        },
      ],
    });
    writeNode('node-b', storeNow - 1000, {
      beatAt: 1,
      circuits: [{ host: 'ssh://dead.example.com', state: 'half-open', trips: 1, nextProbeAt: 0, lastError: null }, { host: 42 }],
    });
    writeNode('node-c', storeNow - 1000, {
      stoppedAt: 1,
      circuits: [{ host: 'ssh://old.example.com', state: 'open', trips: 1, nextProbeAt: 0, lastError: null }],
    });
    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 });
    expect(status.circuits).toEqual([
      {
        nodeId: 'node-a',
        host: 'ssh://dead.example.com',
        state: 'open',
        trips: 3,
        nextProbeInMs: 30_000,
        lastError: 'ssh: connect to host dead.example.com port 22: Connection refused',
      },
      { nodeId: 'node-b', host: 'ssh://dead.example.com', state: 'half-open', trips: 1, nextProbeInMs: null, lastError: null },
    ]);
    const rows = formatStatus(status).split('\n');
    const header = rows.findIndex((row) => row.startsWith('OPEN HOST CIRCUIT'));
    expect(rows[header + 1]!.split(/\s{2,}/)).toEqual([
      'ssh://dead.example.com',
      'node-a',
      'open',
      '3',
      'in 30s',
      'ssh: connect to host dead.example.com port 22: Connection refused',
    ]);
    expect(rows[header + 2]!.split(/\s{2,}/)).toEqual(['ssh://dead.example.com', 'node-b', 'half-open', '1', 'running', '-']);
  });
});

describe('status: failed tasks', () => {
  async function parkAll(store: TaskStore, clock: FakeClock, count: number): Promise<void> {
    for (let n = 1; n <= count; n++) {
      await store.parkFailed(
        { project: 'app', refs: [`refs/heads/b${n}`], uri: '/dest/app.git', remote: 'mirror' },
        { reason: `rejected by the destination: [remote rejected] (hook declined ${n})`, refs: [`refs/heads/b${n}`] },
      );
      clock.advance(1000);
    }
  }

  it('lists the newest 10 with their reasons in the table and says how many more there are; --all lists every one', async () => {
    const { clock, store } = setup();
    await parkAll(store, clock, 12);
    clock.advance(60_000);

    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 });
    expect(status.totals.failed).toBe(12);
    expect(status.failed).toHaveLength(12);
    expect(status.failed[0]).toMatchObject({
      project: 'app',
      refs: ['refs/heads/b12'],
      reason: 'rejected by the destination: [remote rejected] (hook declined 12)',
      failedAgeMs: 61_000,
    });

    const text = formatStatus(status);
    const rows = text.split('\n');
    const header = rows.findIndex((row) => row.startsWith('FAILED URI'));
    expect(rows[header]).toMatch(/^FAILED URI\s+REMOTE\s+PROJECT\s+REFS\s+FAILED\s+REASON$/);
    expect(rows.slice(header + 1, header + 3).map((row) => row.split(/\s{2,}/))).toEqual([
      ['/dest/app.git', 'mirror', 'app', 'refs/heads/b12', '1m01s ago', 'rejected by the destination: [remote rejected] (hook declined 12)'],
      ['/dest/app.git', 'mirror', 'app', 'refs/heads/b11', '1m02s ago', 'rejected by the destination: [remote rejected] (hook declined 11)'],
    ]);
    expect(rows[header + 10]).toContain('refs/heads/b3');
    expect(rows[header + 11]).toBe('… and 2 more (refrelay status --all, or refrelay failed list)');

    const all = formatStatus(status, 'plain', { failedShown: Number.POSITIVE_INFINITY }).split('\n');
    expect(all.filter((row) => row.startsWith('/dest/app.git'))).toHaveLength(12);
    expect(all.join('\n')).not.toContain('more (refrelay status --all');
  });

  it('lists 200 in JSON unless asked for all, and shows no failed section when there are none', async () => {
    const { clock, store } = setup();
    expect(formatStatus(await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 }))).not.toContain('FAILED URI');
    await parkAll(store, clock, 3);
    expect((await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0, failedLimit: 2 })).failed.map((task) => task.refs[0])).toEqual([
      'refs/heads/b3',
      'refs/heads/b2',
    ]);
    expect((await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0, failedLimit: Number.POSITIVE_INFINITY })).failed).toHaveLength(3);
  });

  it('dates a task moved whole to failed/ by its reason, not by its first enqueue, and keeps a hostile name on one escaped line', async () => {
    const { fs, clock, store } = setup();
    fs.mkdirSync(`${ROOT}/ref-updates/running/lock`);
    const hostile = { project: 'app\n\u001b[2Jfake line', refs: ['refs/heads/main'], uri: '/dest/app.git', remote: 'mirror' };
    await store.create(hostile);
    clock.advance(3_600_000);
    const [claimed] = await store.claim('lock', uriKey(hostile.uri));
    await store.fail('lock', [claimed!.name], { reason: 'could not push:\nfatal: hook\u0007 said no' });
    clock.advance(5000);

    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0 });
    expect(status.failed[0]).toMatchObject({ failedAgeMs: 5000, failedAt: clock.now() - 5000 });
    const row = formatStatus(status)
      .split('\n')
      .find((line) => line.startsWith('/dest/app.git'));
    expect(row?.split(/\s{2,}/)).toEqual([
      '/dest/app.git',
      'mirror',
      'app \\u001b[2Jfake line',
      'refs/heads/main',
      '5s ago',
      'could not push: fatal: hook\\u0007 said no',
    ]);
  });
});

describe('status: the waiting queue', () => {
  it('counts waiting/ per remote and URI, or takes the counts a node already has without listing it', async () => {
    const { clock, store } = setup();
    await store.create({ project: 'a', refs: ['refs/heads/main'], uri: '/dest/a.git', remote: 'mirror' });
    clock.advance(5_000);
    await store.create({ project: 'a', refs: ['refs/heads/dev'], uri: '/dest/a.git', remote: 'mirror' });
    const listed = await collectClusterStatus(config, store, clock);
    expect(listed.totals.waiting).toBe(2);
    expect(listed.remotes[0]).toMatchObject({
      name: 'mirror',
      waiting: 2,
      oldestWaitingAgeMs: 5_000,
      uris: [{ uri: '/dest/a.git', waiting: 2, oldestWaitingAgeMs: 5_000 }],
    });

    const counting = Object.assign(Object.create(store) as TaskStore, {
      listWaiting: async () => {
        throw new Error('waiting/ was listed');
      },
    });
    const given = await collectClusterStatus(config, counting, clock, {
      waiting: [{ remote: 'mirror', uri: '/dest/b.git', waiting: 7, oldestMtimeMs: clock.now() - 9_000 }],
    });
    expect(given.totals.waiting).toBe(7);
    expect(given.remotes[0]).toMatchObject({ name: 'mirror', waiting: 7, oldestWaitingAgeMs: 9_000, uris: [{ uri: '/dest/b.git', waiting: 7 }] });
  });

  it('leaves out a lock folder it may not list at all (EACCES), and shows one with a claim folder it may not list', async () => {
    const { clock, store } = setup();
    const lock = (lockName: string, unreadable: RunningLock['unreadable']): RunningLock => ({
      lockName,
      ownerRecord: { nodeId: 'n1' },
      tasks: [],
      unreadable,
      mtimeMs: clock.now(),
    });
    const denied = Object.assign(Object.create(store) as TaskStore, { listRunning: async () => [lock('d'.repeat(40), 'whole'), lock('e'.repeat(40), 'part')] });
    const status = await collectClusterStatus(config, denied, clock);
    expect(status.running.map((claim) => claim.lockName)).toEqual(['e'.repeat(40)]);
  });
});

describe('status: the URI table', () => {
  it('totals each remote, then lists the URIs that waited longest (then the most tasks), as many as asked, and says how many more there are', async () => {
    const { clock, store } = setup();
    const now = clock.now();
    const waiting = [
      { remote: 'mirror', uri: '/dest/new.git', waiting: 1, oldestMtimeMs: now - 1_000 },
      { remote: 'mirror', uri: '/dest/old.git', waiting: 2, oldestMtimeMs: now - 3_600_000 },
      { remote: 'mirror', uri: '/dest/big.git', waiting: 9, oldestMtimeMs: now - 1_000 },
      { remote: 'gone', uri: '/elsewhere/x.git', waiting: 1, oldestMtimeMs: now - 60_000 },
    ];
    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 0, waiting });

    const rows = formatStatus(status, 'plain', { urisShown: 3 })
      .split('\n')
      .map((row) => row.split(/\s{2,}/));
    const remotes = rows.findIndex((row) => row[0] === 'REMOTE' && row[1] === 'URIS');
    expect(rows.slice(remotes, remotes + 3)).toEqual([
      ['REMOTE', 'URIS', 'WAITING', 'OLDEST', 'RUNNING', 'FAILED'],
      ['mirror', '3', '12', '1h00m', '0', '0'],
      ['gone (not configured)', '1', '1', '1m00s', '0', '0'],
    ]);
    const uris = rows.findIndex((row) => row[0] === 'REMOTE' && row[1] === 'URI');
    expect(rows.slice(uris, uris + 5)).toEqual([
      ['REMOTE', 'URI', 'WAITING', 'OLDEST', 'RUNNING', 'FAILED'],
      ['mirror', '/dest/old.git', '2', '1h00m', '0', '0'],
      ['gone (not configured)', '/elsewhere/x.git', '1', '1m00s', '0', '0'],
      ['mirror', '/dest/big.git', '9', '1s', '0', '0'],
      ['… and 1 more (refrelay status --limit 0 lists every URI)'],
    ]);
    expect(formatStatus(status, 'plain', { urisShown: 0 })).toContain('/dest/new.git');
  });
});

describe('status: URIs backing off', () => {
  it('lists each URI whose last push failed with its attempts, last error and the wait for its next attempt, soonest first, passwords and hostile text left out', async () => {
    const { clock, store, fs } = setup();
    const storeNow = clock.now() + 30_000;
    const state = (uri: string, fields: Record<string, unknown>): void => {
      fs.writeRaw(
        `${ROOT}/uri-state/${uriKey(uri)}.json`,
        JSON.stringify({ uri, attempts: 3, lastError: 'e', notBefore: storeNow, updatedAt: 0, nodeId: 'node-a', ...fields }),
      );
    };
    await store.open();
    state('ssh://alice:pw123@mirror.example.com/a.git', {
      lastError: 'ssh: connect to host mirror.example.com port 22: Connection refused',
      notBefore: storeNow + 90_000,
    });
    state('/dest/b.git', { attempts: 1, lastError: 'remote rejected main\nsecond line', notBefore: storeNow - 5_000 });
    state('/dest/c.git', { attempts: 0, lastError: '', notBefore: 0 }); // a fresh state: not failing
    fs.writeRaw(`${ROOT}/uri-state/${'d'.repeat(40)}.json`, '{"attempts": "many"}'); // not a state at all

    const status = await collectClusterStatus(config, store, clock, { storeClockOffsetMs: 30_000 });

    expect(status.backingOff).toEqual({
      unread: 0,
      uris: [
        { uriKey: uriKey('/dest/b.git'), uri: '/dest/b.git', attempts: 1, lastError: 'remote rejected main', nextAttemptInMs: 0, nodeId: 'node-a' },
        {
          uriKey: uriKey('ssh://alice:pw123@mirror.example.com/a.git'),
          uri: 'ssh://alice:***@mirror.example.com/a.git',
          attempts: 3,
          lastError: 'ssh: connect to host mirror.example.com port 22: Connection refused',
          nextAttemptInMs: 90_000,
          nodeId: 'node-a',
        },
      ],
    });
    const rows = formatStatus(status).split('\n');
    const header = rows.findIndex((row) => row.startsWith('BACKING OFF URI'));
    expect(rows[header]).toMatch(/^BACKING OFF URI\s+ATTEMPTS\s+NEXT ATTEMPT\s+LAST ERROR$/);
    expect(rows.slice(header + 1, header + 3).map((row) => row.split(/\s{2,}/))).toEqual([
      ['/dest/b.git', '1', 'due now', 'remote rejected main'],
      ['ssh://alice:***@mirror.example.com/a.git', '3', 'in 1m30s', 'ssh: connect to host mirror.example.com port 22: Connection refused'],
    ]);
    expect(formatStatus(status)).not.toContain('pw123');
  });
});
