import { describe, expect, it } from 'vitest';
import { Daemon, type DaemonOptions } from '../../../src/daemon/daemon.js';
import type { NodeRecord } from '../../../src/cluster/node-heartbeat.js';
import type { PushOutcome, PushRequest } from '../../../src/push/push-types.js';
import { silentLog, type Log } from '../../../src/runtime/log.js';
import { FakeTimers } from '../../support/fake-clock.js';
import { FakeLocks, FakePusher, harness, type Harness } from '../schedule/scheduler-harness.js';

const base = [
  'replication.distributionInterval=1s',
  'replication.randomDelay=0',
  'remote.mirror.url=/dest/mirror/${name}.git',
  'remote.mirror.replicationDelay=2s',
];
const GRACE_MS = 5_000;

/** A push that runs until the node aborts it, as a hung `git push` would. */
class HangingPusher extends FakePusher {
  override async push(request: PushRequest): Promise<PushOutcome> {
    this.requests.push(request);
    return new Promise((resolve) => {
      request.signal?.addEventListener('abort', () =>
        resolve({
          result: 'failed',
          refs: [],
          failure: { kind: 'aborted', message: 'aborted', stderrTail: '', retryable: true },
          createdRepository: false,
          durationMs: 0,
          argv: [],
        }),
      );
    });
  }
}

interface Node {
  readonly h: Harness;
  readonly daemon: Daemon;
  readonly timers: FakeTimers;
  /** What the node did, in order, through its collaborators. */
  readonly calls: string[];
  /** The `stopped` flag of every heartbeat written. */
  readonly beats: boolean[];
  /** Advance the fake clock step by step until `promise` settles; no real time passes. */
  until<T>(promise: Promise<T>, stepMs?: number): Promise<T>;
}

function node(options: { drain?: boolean; pusher?: FakePusher; h?: Harness; log?: Log } = {}): Node {
  const h = options.h ?? harness(base);
  const timers = new FakeTimers(h.clock);
  const calls: string[] = [];
  const beats: boolean[] = [];
  const leases = Object.assign(new FakeLocks(h.fs), { ownLeases: new Set<string>(), ownLocks: new Set<string>() });
  const daemonOptions: DaemonOptions = {
    config: h.deps.config(),
    store: h.store,
    pusher: options.pusher ?? h.pusher,
    clock: h.clock,
    random: h.deps.random,
    timers,
    log: options.log ?? silentLog,
    host: 'host-a',
    pid: 4242,
    version: 'test',
    drain: options.drain ?? false,
    shutdownGraceMs: GRACE_MS,
    parts: {
      leases,
      heartbeat: {
        beat: async (_running, _offset, stopped = false) => {
          calls.push(stopped ? 'stopped heartbeat' : 'heartbeat');
          beats.push(stopped);
          return {} as NodeRecord;
        },
      },
      recovery: {
        takeoverCount: 0,
        recoverOwn: async (nodeId) => {
          calls.push(`recover own claims of ${nodeId}`);
          return 0;
        },
        pass: async () => void calls.push('observe locks'),
      },
      verify: { maybeRun: () => undefined },
      probeClock: async () => 0,
      assertNodeIdFree: async () => void calls.push('node id free'),
      watchLocalWrites: () => {
        calls.push('watch local writes');
        return () => calls.push('end local write watch');
      },
      liveNodes: { membership: { self: h.deps.config().nodeId, live: [h.deps.config().nodeId] }, refresh: async () => undefined },
    },
  };
  const daemon = new Daemon(daemonOptions);
  return {
    h,
    daemon,
    timers,
    calls,
    beats,
    async until<T>(promise: Promise<T>, stepMs = 100): Promise<T> {
      let outcome: { value: T } | { error: unknown } | undefined;
      promise.then(
        (value) => (outcome = { value }),
        (error: unknown) => (outcome = { error }),
      );
      for (let step = 0; step < 10_000; step++) {
        await h.settle();
        if (outcome !== undefined) {
          if ('error' in outcome) throw outcome.error;
          return outcome.value;
        }
        await timers.advance(stepMs, () => h.settle());
      }
      throw new Error('still running after 10,000 steps of fake time');
    },
  };
}

describe('Daemon start-up', () => {
  it('checks its node id, writes a heartbeat and takes back its own earlier claims before the first pass', async () => {
    const n = node({ drain: true });
    expect(await n.until(n.daemon.run())).toBe(0);
    expect(n.calls.slice(0, 5)).toEqual(['node id free', 'heartbeat', 'recover own claims of host', 'watch local writes', 'observe locks']);
  });
});

describe('Daemon.tick', () => {
  it('pushes a due task in one pass and asks to sleep no longer than the pass interval', async () => {
    const n = node();
    await n.daemon.start();
    await n.h.enqueue('p', ['refs/heads/main']);
    n.h.clock.advance(2_000);
    const outcome = await n.daemon.tick();
    await n.h.settle();
    expect(outcome).toBeLessThanOrEqual(1_000);
    expect(n.h.pusher.requests.map((request) => request.refs)).toEqual([['refs/heads/main']]);
    expect(await n.h.store.listWaitingNames()).toEqual([]);
  });

  it('leaves a task that is not due yet, and says to wake when it is', async () => {
    const n = node();
    await n.daemon.start();
    await n.h.enqueue('p', ['refs/heads/main']);
    n.h.clock.advance(1_500);
    expect(await n.daemon.tick()).toBe(500);
    expect(n.h.pusher.requests).toEqual([]);
    expect(await n.h.store.listWaitingNames()).toHaveLength(1);
  });

  it('starts the periodic pass one interval after the last one started, however long that pass took', async () => {
    const n = node();
    await n.daemon.start();
    const listWaiting = n.h.store.listWaiting.bind(n.h.store);
    // A listing of a big backlog on a slow store: 600 ms of the 1 s interval.
    n.h.store.listWaiting = async (options) => {
      if (options?.cached !== true) n.h.clock.advance(600);
      return listWaiting(options);
    };
    expect(await n.daemon.tick()).toBe(400);
    // A pass for a freed slot (reusing the listing) does not move the period: the periodic one is still due 1 s after the last.
    n.h.clock.advance(100);
    expect(await n.daemon.tick('slot')).toBe(300);
  });

  it('says once when its first pass over the queue is done, with how many URIs wait', async () => {
    const infos: Array<[unknown, string | undefined]> = [];
    const n = node({ log: { ...silentLog, info: (fields, message) => void infos.push([fields, message]) } });
    await n.daemon.start();
    await n.h.enqueue('p', ['refs/heads/main']);
    await n.daemon.tick();
    await n.daemon.tick();
    const firstPass = infos.filter(([, message]) => message === 'first pass over the queue done');
    expect(firstPass).toHaveLength(1);
    expect(firstPass[0]![0]).toMatchObject({ pendingUris: 1, started: 0 });
  });

  it('writes the heartbeat and observes locks once per interval, however many passes run', async () => {
    const n = node();
    await n.daemon.start();
    const count = (what: string): number => n.calls.filter((call) => call === what).length;
    await n.daemon.tick();
    await n.daemon.tick();
    expect([count('heartbeat'), count('observe locks')]).toEqual([1, 1]);
    n.h.clock.advance(1_000);
    await n.daemon.tick();
    await n.daemon.tick();
    expect([count('heartbeat'), count('observe locks')]).toEqual([2, 2]);
  });

  it('ends a drain only on a fresh listing with nothing left', async () => {
    const n = node({ drain: true });
    await n.daemon.start();
    expect(await n.daemon.tick('slot')).toBe('drained');
    await n.h.enqueue('p', ['refs/heads/main']);
    expect(typeof (await n.daemon.tick())).toBe('number');
  });

  it('in a drain, lists again at once when the pass for a freed slot finds nothing left but what this node pushed', async () => {
    const n = node({ drain: true });
    await n.daemon.start();
    await n.h.enqueue('p', ['refs/heads/main']);
    n.h.clock.advance(2_000);
    expect(typeof (await n.daemon.tick())).toBe('number');
    await n.h.settle();
    expect(n.h.pusher.requests).toHaveLength(1);
    // The listing is reused: the folder this node claimed and emptied is not counted as work still to learn.
    expect(await n.daemon.tick('slot')).toBe('list-again');
    expect(await n.daemon.tick()).toBe('drained');
  });
});

describe('Daemon stop', () => {
  it('lets a running push finish, then ends the watch and leaves a stopped heartbeat', async () => {
    const n = node();
    n.h.pusher.manual = true;
    await n.h.enqueue('p', ['refs/heads/main']);
    const run = n.daemon.run();
    await n.until(new Promise<void>((resolve) => n.timers.after(2_000, resolve)));
    expect(n.h.pusher.inFlight).toBe(1);
    n.daemon.requestStop();
    await n.h.settle();
    n.h.pusher.releaseAll();
    expect(await n.until(run)).toBe(0);
    expect(await n.h.store.listWaitingNames()).toEqual([]);
    expect(n.calls.slice(-2)).toEqual(['end local write watch', 'stopped heartbeat']);
  });

  it('aborts pushes still running when the shutdown grace is over, and puts their tasks back in waiting/', async () => {
    const pusher = new HangingPusher();
    const n = node({ pusher });
    await n.h.enqueue('p', ['refs/heads/main']);
    const run = n.daemon.run();
    await n.until(new Promise<void>((resolve) => n.timers.after(2_000, resolve)));
    expect(pusher.requests).toHaveLength(1);
    const stoppedAt = n.h.clock.monotonic();
    n.daemon.requestStop();
    expect(await n.until(run, 1_000)).toBe(0);
    expect(n.h.clock.monotonic() - stoppedAt).toBeGreaterThanOrEqual(GRACE_MS);
    expect(await n.h.store.listWaitingNames()).toHaveLength(1);
    expect(n.beats.at(-1)).toBe(true);
  });
});
