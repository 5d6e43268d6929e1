import { describe, expect, it } from 'vitest';
import { Distributor } from '../../../src/schedule/distributor.js';
import { DEFAULT_BACKOFF_CAP_MS } from '../../../src/schedule/backoff.js';
import { parseUriState } from '../../../src/schedule/uri-state.js';
import { harness, uriKey } from './scheduler-harness.js';

const base = [
  'replication.distributionInterval=1s',
  'replication.randomDelay=2s',
  'remote.mirror.url=/dest/mirror/${name}.git',
  'remote.mirror.replicationDelay=10s',
  'remote.mirror.replicationRetry=4s',
];

describe('Distributor due times', () => {
  it('does not push a URI before oldest mtime + replicationDelay + jitter, and pushes it after', async () => {
    const h = harness(base, { random: 0.5 }); // jitter = 0.5 × 2s = 1s
    await h.enqueue('p', ['refs/heads/main']);
    const distributor = new Distributor(h.deps);
    h.clock.advance(10_999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);
    await h.settle();
    expect(h.pusher.requests.map((r) => r.refs)).toEqual([['refs/heads/main']]);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('uses distributionInterval as the batching window when it exceeds replicationDelay', async () => {
    const h = harness([...base, 'replication.distributionInterval=30s', 'replication.randomDelay=0'], {});
    await h.enqueue('p', ['refs/heads/main']);
    const distributor = new Distributor(h.deps);
    h.clock.advance(29_999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);
  });

  it('reports when the next URI becomes due so the loop can sleep exactly that long', async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/main']);
    const enqueuedAt = h.clock.now();
    const report = await new Distributor(h.deps).tick();
    expect(report.nextDueAt).toBe(enqueuedAt + 10_000);
    expect(report.pendingUris).toBe(1);
  });
});

describe('Distributor read-ahead', () => {
  it('reads the tasks of a URI ahead once it is due within a pass and a second, and its claim then reads none of them', async () => {
    const h = harness(base, { random: 0 }); // due at enqueue + 10 s
    const readAhead: string[][] = [];
    const store = Object.assign(Object.create(h.store) as typeof h.store, {
      readAhead: (keys: readonly string[]) => {
        readAhead.push([...keys]);
        return h.store.readAhead(keys);
      },
    });
    const reads: string[] = [];
    const readBounded = h.fs.readBounded.bind(h.fs);
    h.fs.readBounded = (path, maxBytes) => {
      reads.push(path);
      return readBounded(path, maxBytes);
    };
    await h.enqueue('p', ['refs/heads/main']);
    await h.enqueue('p', ['refs/heads/dev']);
    const distributor = new Distributor({ ...h.deps, store });
    h.clock.advance(7_999);
    await distributor.tick();
    expect(readAhead).toEqual([]);
    h.clock.advance(1);
    await distributor.tick();
    await h.settle();
    expect(readAhead).toEqual([[uriKey(h.uriOf('p'))]]);
    reads.length = 0;
    h.clock.advance(2_000);
    expect((await distributor.tick()).started).toBe(1);
    await h.settle();
    expect(h.pusher.requests.map((r) => [...r.refs].sort())).toEqual([['refs/heads/dev', 'refs/heads/main']]);
    expect(reads.filter((path) => path.endsWith('.json') && !path.includes('/uri-state/'))).toEqual([]);
  });
});

describe('Distributor consolidation and concurrency', () => {
  it('claims every waiting task of a URI into one push carrying the union of their refs', async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/a']);
    await h.enqueue('p', ['refs/heads/b', 'refs/heads/a']);
    await h.enqueue('p', ['refs/tags/v1']);
    await h.enqueue('q', ['refs/heads/a']);
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(1); // threads = 1 for the remote
    await distributor.whenIdle();
    expect((await distributor.tick()).started).toBe(1); // then q, another URI
    await distributor.whenIdle();
    const pushed = h.pusher.requests.map((request) => [request.localRepo, [...request.refs].sort()]);
    expect(pushed).toEqual([
      ['/repos/p.git', ['refs/heads/a', 'refs/heads/b', 'refs/tags/v1']],
      ['/repos/q.git', ['refs/heads/a']],
    ]);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('never runs more pushes to one remote than its threads, and runs them when a slot frees', async () => {
    const h = harness([...base, 'remote.mirror.threads=2'], { random: 0 });
    for (const project of ['a', 'b', 'c']) await h.enqueue(project, ['refs/heads/main']);
    h.clock.advance(10_000);
    h.pusher.manual = true;
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(2);
    await h.settle();
    expect(h.pusher.inFlight).toBe(2);
    expect((await distributor.tick()).started).toBe(0);
    h.pusher.manual = false;
    h.pusher.releaseAll();
    await distributor.whenIdle();
    expect((await distributor.tick()).started).toBe(1);
    await distributor.whenIdle();
    expect(h.pusher.requests.map((request) => request.localRepo).sort()).toEqual(['/repos/a.git', '/repos/b.git', '/repos/c.git']);
  });

  it('passes that reuse the listing drop what this node claimed without listing again, and push every URI once', async () => {
    const h = harness([...base, 'remote.mirror.threads=2'], { random: 0 });
    for (const project of ['a', 'b', 'c', 'd', 'e']) {
      await h.enqueue(project, ['refs/heads/main']);
      await h.enqueue(project, ['refs/heads/dev']);
    }
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(2);
    await distributor.whenIdle();
    let listings = 0;
    const listWaiting = h.store.listWaiting.bind(h.store);
    h.store.listWaiting = (options) => {
      if (options?.cached !== true) listings++; // a cached listing reads no folder
      return listWaiting(options);
    };
    const pending: number[] = [];
    for (let pass = 0; pass < 3; pass++) {
      pending.push((await distributor.tick({ reuseListing: true })).pendingUris);
      await distributor.whenIdle();
    }
    expect(pending).toEqual([3, 1, 0]); // c d e; then e; then nothing: a and b are not offered again
    expect(listings).toBe(0);
    expect(h.pusher.requests.map((request) => [request.localRepo, [...request.refs].sort()])).toEqual(
      ['a', 'b', 'c', 'd', 'e'].map((project) => [`/repos/${project}.git`, ['refs/heads/dev', 'refs/heads/main']]),
    );
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('leaves tasks waiting when another node holds the URI lock, and looks again after distributionInterval', async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/main']);
    h.locks.heldElsewhere.add(uriKey(h.uriOf('p')));
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(1);
    await distributor.whenIdle();
    expect(h.pusher.requests).toEqual([]);
    expect(await h.store.listWaitingNames()).toHaveLength(1);
    h.locks.heldElsewhere.clear();
    h.clock.advance(999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);
    await distributor.whenIdle();
    expect(h.pusher.requests).toHaveLength(1);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('puts updates that arrive during a push into the next push after rescheduleDelay', async () => {
    const h = harness([...base, 'remote.mirror.rescheduleDelay=5s'], { random: 0 });
    await h.enqueue('p', ['refs/heads/a']);
    h.clock.advance(10_000);
    h.pusher.manual = true;
    const distributor = new Distributor(h.deps);
    await distributor.tick();
    await h.settle();
    await h.enqueue('p', ['refs/heads/b']); // arrives mid-push, already "old enough"? no: just now
    h.clock.advance(20_000);
    expect((await distributor.tick()).started).toBe(0); // the URI is busy on this node
    h.pusher.manual = false;
    h.pusher.releaseAll();
    await distributor.whenIdle();
    h.clock.advance(4_999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    expect((await distributor.tick()).started).toBe(1);
    await distributor.whenIdle();
    expect(h.pusher.requests.map((request) => request.refs)).toEqual([['refs/heads/a'], ['refs/heads/b']]);
  });

  it('never pushes a task file naming an unknown remote, a URL its remote does not have, or bad names; after lockStale and two passes it parks them in failed/ with the reason', async () => {
    const h = harness([...base, 'replication.lockStale=30s'], { random: 0 });
    await h.enqueue('p', ['refs/heads/main'], 'unknown', '/dest/unknown/p.git');
    await h.enqueue('p', ['refs/heads/main'], 'mirror', '/elsewhere/evil.git');
    await h.enqueue('../../etc', ['refs/heads/main'], 'mirror', '/dest/mirror/../../etc.git');
    await h.enqueue('q', ['refs/heads/../x'], 'mirror', '/dest/mirror/q.git');
    const distributor = new Distributor(h.deps);
    h.clock.advance(30_000 + 2 * 3000 - 1);
    expect(await distributor.tick()).toMatchObject({ started: 0, pendingUris: 4 });
    await distributor.whenIdle();
    expect(await h.store.listWaitingNames()).toHaveLength(4);

    h.clock.advance(1);
    await distributor.tick();
    await distributor.whenIdle();
    expect(await h.store.listWaitingNames()).toEqual([]);
    expect(h.pusher.requests).toEqual([]);
    expect(distributor.failedCount).toBe(4);
    const reasons = (await h.store.listFailed()).map((failed) => failed.reason?.reason).sort();
    expect(reasons).toEqual([
      'invalid project name "../../etc": has a ".." segment',
      'invalid ref name "refs/heads/../x": contains ".."',
      `remote "unknown" is not configured in ${h.deps.config().file}`,
      'uri "/elsewhere/evil.git" is not a URL of remote "mirror" for project "p"',
    ]);
    expect(await distributor.tick()).toMatchObject({ pendingUris: 0 });
    expect(await h.store.listRunning()).toEqual([]);
  });
});

describe('Distributor push slots', () => {
  /** The store, with `finish` held until the test opens the gate. */
  function slowFinish(h: ReturnType<typeof harness>): { store: typeof h.store; open: () => void } {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const store = Object.assign(Object.create(h.store) as typeof h.store, {
      finish: async (lockName: string, names: readonly string[]) => {
        await gate;
        return h.store.finish(lockName, names);
      },
    });
    return { store, open };
  }

  it('starts the next URI while the previous push is still finishing its task files', async () => {
    const h = harness(base, { random: 0 }); // threads = 1
    await h.enqueue('a', ['refs/heads/main']);
    await h.enqueue('b', ['refs/heads/main']);
    h.clock.advance(10_000);
    const slow = slowFinish(h);
    let slotsFreed = 0;
    const distributor = new Distributor({ ...h.deps, store: slow.store }, () => slotsFreed++);
    expect((await distributor.tick()).started).toBe(1);
    await h.settle();
    expect(slotsFreed).toBe(1); // the push is over; its task files are not finished yet
    expect((await distributor.tick()).started).toBe(1);
    await h.settle();
    expect(h.pusher.requests.map((request) => request.localRepo).sort()).toEqual(['/repos/a.git', '/repos/b.git']);
    expect(distributor.runningCount).toBe(2);
    slow.open();
    await distributor.whenIdle();
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('takes a URI ahead only once it has been due for a whole pass, and pushes it the moment the slot frees', async () => {
    const h = harness([...base, 'replication.randomDelay=0'], { random: 0 }); // threads = 1, one pass = 1s
    for (const project of ['a', 'b', 'c', 'd']) await h.enqueue(project, ['refs/heads/main']);
    h.clock.advance(10_000);
    h.pusher.manual = true;
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(1); // the others are only just due: an idle peer may push them
    await h.settle();
    expect(await h.store.listWaitingNames()).toHaveLength(3);
    h.clock.advance(999);
    expect((await distributor.tick()).started).toBe(0);
    h.clock.advance(1);
    // No peer took them within a pass: a backlog. One is taken ahead; the last 2 × threads are left to peers.
    expect((await distributor.tick()).started).toBe(1);
    await h.settle();
    expect(await h.store.listWaitingNames()).toHaveLength(2); // locked and claimed ahead ...
    expect(h.pusher.requests).toHaveLength(1); // ... but waiting for the slot
    h.pusher.releaseAll();
    await h.settle();
    expect(h.pusher.requests).toHaveLength(2); // no pass in between
    h.pusher.manual = false;
    h.pusher.releaseAll();
    await distributor.whenIdle();
    expect(h.pusher.requests.map((request) => request.localRepo)).toEqual(['/repos/a.git', '/repos/b.git']);
  });

  it('puts the tasks of a URI taken ahead back untouched when the node stops before its slot frees', async () => {
    const h = harness([...base, 'replication.randomDelay=0'], { random: 0 });
    for (const project of ['a', 'b', 'c', 'd']) await h.enqueue(project, ['refs/heads/main']);
    h.clock.advance(11_000); // all overdue by a pass: the second is taken ahead at once
    h.pusher.manual = true;
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(2);
    await h.settle();
    expect(h.pusher.requests).toHaveLength(1);
    expect(await h.store.listWaitingNames()).toHaveLength(2);
    distributor.stopAccepting();
    distributor.abortAll();
    h.pusher.manual = false;
    h.pusher.releaseAll();
    await distributor.whenIdle();
    expect(h.pusher.requests).toHaveLength(1);
    const pushed = h.pusher.requests[0]!.localRepo;
    const left = h
      .waitingTasks()
      .map((entry) => `/repos/${entry.task.project}.git`)
      .sort();
    expect(left).toEqual(['/repos/a.git', '/repos/b.git', '/repos/c.git', '/repos/d.git'].filter((repo) => repo !== pushed));
    expect(h.locks.held.size).toBe(0);
  });

  it('never has more than threads pushes of a remote at once, however many URIs are backlogged', async () => {
    const h = harness([...base, 'replication.randomDelay=0', 'remote.mirror.threads=2'], { random: 0 });
    const projects = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    for (const project of projects) await h.enqueue(project, ['refs/heads/main']);
    h.clock.advance(20_000);
    h.pusher.manual = true;
    const distributor = new Distributor(h.deps);
    expect((await distributor.tick()).started).toBe(4); // 2 pushing + 2 taken ahead (the only group at work)
    await h.settle();
    expect(h.pusher.inFlight).toBe(2);
    expect(await h.store.listWaitingNames()).toHaveLength(5);
    h.pusher.manual = false;
    h.pusher.releaseAll();
    for (let pass = 0; pass < 5; pass++) {
      await distributor.tick();
      await distributor.whenIdle();
    }
    expect(h.pusher.requests).toHaveLength(projects.length);
  });
});

describe('Distributor retries and failures', () => {
  const transient = {
    result: 'failed' as const,
    refs: [],
    failure: { kind: 'unreachable' as const, message: 'connection refused', stderrTail: '', retryable: true },
  };

  it('backs off a transient failure cluster-wide in uri-state and doubles the delay on the next failure', async () => {
    const h = harness(base, { random: 1 - 1e-9 }); // backoff factor ≈ 1, jitter ≈ 2s
    await h.enqueue('p', ['refs/heads/main']);
    h.pusher.respond = () => transient;
    const distributor = new Distributor(h.deps);
    h.clock.advance(12_000);
    await distributor.tick();
    await distributor.whenIdle();
    const key = uriKey(h.uriOf('p'));
    const first = parseUriState(await h.store.readUriState(key))!;
    expect(first).toMatchObject({ attempts: 1, lastError: 'connection refused' });
    expect(first.notBefore - h.clock.now()).toBe(4_000);
    expect(await h.store.listWaitingNames()).toHaveLength(1); // back in waiting/

    // Another node (a fresh distributor) honours the persisted backoff.
    const peer = new Distributor(h.deps);
    h.clock.advance(3_999);
    await peer.tick();
    await peer.whenIdle();
    expect(h.pusher.requests).toHaveLength(1);
    h.clock.advance(1);
    await peer.tick();
    await peer.whenIdle();
    expect(h.pusher.requests).toHaveLength(2);
    const second = parseUriState(await h.store.readUriState(key))!;
    expect(second.attempts).toBe(2);
    expect(second.notBefore - h.clock.now()).toBe(8_000);
  });

  it('moves the tasks to failed/ once replicationMaxRetries is exceeded and clears the retry state', async () => {
    const h = harness([...base, 'remote.mirror.replicationMaxRetries=1'], { random: 0.999999 });
    await h.enqueue('p', ['refs/heads/main']);
    h.pusher.respond = () => transient;
    const distributor = new Distributor(h.deps);
    h.clock.advance(12_000);
    await distributor.tick();
    await distributor.whenIdle();
    h.clock.advance(4_000);
    await distributor.tick();
    await distributor.whenIdle();
    const failed = await h.store.listFailed();
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason?.reason).toBe('connection refused (gave up after 2 attempts)');
    expect(await h.store.readUriState(uriKey(h.uriOf('p')))).toBeUndefined();
    expect(distributor.failedCount).toBe(1);
  });

  it("parks a rejected ref in failed/ with git's reason while the rest of the push is finished", async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/a', 'refs/heads/b']);
    h.pusher.respond = () => ({
      result: 'partial',
      refs: [
        { ref: 'refs/heads/a', dst: 'refs/heads/a', status: 'updated' },
        { ref: 'refs/heads/b', dst: 'refs/heads/b', status: 'rejected', detail: 'non-fast-forward' },
      ],
    });
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    await distributor.tick();
    await distributor.whenIdle();
    expect(await h.store.listWaitingNames()).toEqual([]);
    const failed = await h.store.listFailed();
    expect(failed.map((item) => item.task.refs)).toEqual([['refs/heads/b']]);
    expect(failed[0]!.reason?.reason).toBe('rejected by the destination: non-fast-forward');
  });

  it('sends a permanent failure straight to failed/ without retrying', async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/main']);
    h.pusher.respond = () => ({
      result: 'failed',
      refs: [],
      failure: { kind: 'local-missing', message: 'local repository /repos/p.git does not exist', stderrTail: '', retryable: false },
    });
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    await distributor.tick();
    await distributor.whenIdle();
    expect((await h.store.listFailed()).map((item) => item.reason?.reason)).toEqual(['local repository /repos/p.git does not exist']);
    expect(await h.store.readUriState(uriKey(h.uriOf('p')))).toBeUndefined();
  });

  it('puts tasks back to waiting without counting an attempt when the push is aborted by shutdown', async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/main']);
    h.pusher.respond = () => ({ result: 'failed', refs: [], failure: { kind: 'aborted', message: 'stopped', stderrTail: '', retryable: false } });
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    await distributor.tick();
    await distributor.whenIdle();
    expect(await h.store.listWaitingNames()).toHaveLength(1);
    expect(await h.store.readUriState(uriKey(h.uriOf('p')))).toBeUndefined();
    expect(h.locks.held.size).toBe(0);
  });

  it('writes nothing once the lock was taken over during the push (fencing)', async () => {
    const h = harness(base, { random: 0 });
    await h.enqueue('p', ['refs/heads/main']);
    const key = uriKey(h.uriOf('p'));
    h.pusher.respond = () => {
      h.locks.held.set(key, 'someone-else'); // taken over while pushing
      return {};
    };
    h.clock.advance(10_000);
    const distributor = new Distributor(h.deps);
    await distributor.tick();
    await distributor.whenIdle();
    // The claimed file stays where the new owner can find it; nothing finished, nothing failed.
    expect((await h.store.listClaimed(key)).map((item) => item.task.refs)).toEqual([['refs/heads/main']]);
    expect(await h.store.listFailed()).toEqual([]);
    expect(h.locks.held.get(key)).toBe('someone-else');
  });
});

describe('Distributor pacing of an overloaded host', () => {
  const overload = {
    result: 'failed' as const,
    refs: [],
    failure: {
      kind: 'overloaded' as const,
      message: 'error: RPC failed; HTTP 429 curl 22 The requested URL returned error: 429',
      stderrTail: '',
      retryable: true,
    },
  };

  it('halves the pushes at once to the host, spaces their starts, and spends no retry on the overload', async () => {
    const h = harness([...base, 'replication.randomDelay=0', 'remote.mirror.threads=4'], { random: 0 });
    const projects = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const project of projects) await h.enqueue(project, ['refs/heads/main']);
    h.clock.advance(10_000);
    h.pusher.manual = true;
    h.pusher.respond = () => overload;
    const distributor = new Distributor(h.deps);
    await distributor.tick();
    await h.settle();
    expect(h.pusher.inFlight).toBe(4);
    h.pusher.releaseAll();
    await distributor.whenIdle();
    for (const project of projects) expect(await h.store.readUriState(uriKey(h.uriOf(project)))).toBeUndefined();
    expect(distributor.schedule('n').pacedHosts).toEqual([{ host: 'local', window: 2, spacingMs: 375, retryAfterMs: null }]);

    h.pusher.respond = () => ({});
    h.clock.advance(1000); // past the rescheduling of the reset URIs
    await distributor.tick();
    await h.settle();
    expect(h.pusher.inFlight).toBe(1); // spacing: one start per 375 ms
    h.clock.advance(375);
    await distributor.tick();
    await h.settle();
    expect(h.pusher.inFlight).toBe(2);
    h.clock.advance(375);
    await distributor.tick();
    await h.settle();
    expect(h.pusher.inFlight).toBe(2); // window 2
  });
});

describe('Distributor and the retry state in the store (untrusted input)', () => {
  const hourMs = DEFAULT_BACKOFF_CAP_MS;
  const threeThousandYearsMs = 3000 * 365.25 * 24 * 3600 * 1000;

  it('counts a notBefore three thousand years ahead as now + 1 h, writes that back, and pushes once the hour is over', async () => {
    const h = harness(base, { random: 0 });
    const uri = h.uriOf('p');
    const key = uriKey(uri);
    await h.store.writeUriState(key, {
      uri,
      attempts: 2,
      lastError: 'connection refused',
      notBefore: h.clock.now() + threeThousandYearsMs,
      updatedAt: h.clock.now(),
      nodeId: 'node-b',
    });
    await h.enqueue('p', ['refs/heads/main']);
    const distributor = new Distributor(h.deps);
    h.clock.advance(10_000);
    await distributor.tick();
    await distributor.whenIdle();
    expect(h.pusher.requests).toEqual([]);
    expect(parseUriState(await h.store.readUriState(key))).toMatchObject({ uri, attempts: 2, notBefore: h.clock.now() + hourMs });
    expect(distributor.schedule('node-a').uris.map((entry) => entry.backoffUntilMs)).toEqual([hourMs]);

    h.clock.advance(hourMs - 1);
    await distributor.tick();
    await distributor.whenIdle();
    expect(h.pusher.requests).toEqual([]);
    h.clock.advance(1);
    await distributor.tick();
    await distributor.whenIdle();
    expect(h.pusher.requests.map((request) => request.refs)).toEqual([['refs/heads/main']]);
    expect(await h.store.listWaitingNames()).toEqual([]);
    expect(await h.store.readUriState(key)).toBeUndefined();
  });

  it('forgets a remembered backoff on the next pass once its state file is deleted, and pushes then', async () => {
    const h = harness(base, { random: 0 });
    const uri = h.uriOf('p');
    const key = uriKey(uri);
    await h.store.writeUriState(key, {
      uri,
      attempts: 1,
      lastError: 'connection refused',
      notBefore: h.clock.now() + 30 * 60_000,
      updatedAt: h.clock.now(),
      nodeId: 'node-b',
    });
    await h.enqueue('p', ['refs/heads/main']);
    const distributor = new Distributor(h.deps);
    h.clock.advance(10_000);
    await distributor.tick();
    await distributor.whenIdle();
    expect(h.pusher.requests).toEqual([]);

    // While the file is there the remembered backoff holds, pass after pass.
    h.clock.advance(1_000);
    expect((await distributor.tick()).started).toBe(0);
    expect(h.pusher.requests).toEqual([]);

    expect(await h.store.deleteUriState(key)).toBe(true);
    expect((await distributor.tick()).started).toBe(1);
    await distributor.whenIdle();
    expect(h.pusher.requests.map((request) => request.refs)).toEqual([['refs/heads/main']]);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('keeps a backoff it set itself while the state file is listed, and forgets it when the file goes', async () => {
    const h = harness(base, { random: 1 - 1e-9 }); // backoff factor ≈ 1: retry in 4 s
    await h.enqueue('p', ['refs/heads/main']);
    h.pusher.respond = () => ({ result: 'failed', refs: [], failure: { kind: 'unreachable', message: 'connection refused', stderrTail: '', retryable: true } });
    const distributor = new Distributor(h.deps);
    h.clock.advance(12_000);
    await distributor.tick();
    await distributor.whenIdle();
    expect(h.pusher.requests).toHaveLength(1);
    h.pusher.respond = () => ({});
    h.clock.advance(3_999);
    expect((await distributor.tick()).started).toBe(0);
    await h.store.deleteUriState(uriKey(h.uriOf('p')));
    expect((await distributor.tick()).started).toBe(1);
    await distributor.whenIdle();
    expect(h.pusher.requests).toHaveLength(2);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });
});

describe('Distributor.waitingUris: the queue as the last pass listed it, for the endpoints', () => {
  it('is unknown before the first pass, then counts each URI with its oldest task, refused tasks included', async () => {
    const h = harness(base);
    const distributor = new Distributor(h.deps);
    expect(distributor.waitingUris()).toBeUndefined();
    const first = h.clock.now();
    await h.enqueue('p', ['refs/heads/main']);
    h.clock.advance(1_000);
    await h.enqueue('p', ['refs/heads/dev']);
    await h.enqueue('q', ['refs/heads/main']);
    await h.enqueue('p', ['refs/heads/x'], 'mirror', '/elsewhere/evil.git');

    await distributor.tick();

    const counted = [...distributor.waitingUris()!].sort((a, b) => a.uri.localeCompare(b.uri));
    expect(counted).toEqual([
      { remote: 'mirror', uri: '/dest/mirror/p.git', uriKey: uriKey('/dest/mirror/p.git'), waiting: 2, oldestMtimeMs: first },
      { remote: 'mirror', uri: '/dest/mirror/q.git', uriKey: uriKey('/dest/mirror/q.git'), waiting: 1, oldestMtimeMs: h.clock.now() },
      { remote: 'mirror', uri: '/elsewhere/evil.git', waiting: 1, oldestMtimeMs: h.clock.now() },
    ]);
  });
});
