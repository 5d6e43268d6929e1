import { describe, expect, it } from 'vitest';
import { LockObserver } from '../../../src/lock/lock-observer.js';
import { UriLocks } from '../../../src/lock/uri-lock.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { memoryLockFs } from '../../contract/support/memory-lock-fs.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';

const RUNNING = '/store/ref-updates/running';
const LOCK = 'a'.repeat(40);
const OTHER = 'b'.repeat(40);
const URI = 'ssh://replica.example.com/project.git';
const STALE_MS = 6000;
const NOTHING: ReadonlySet<string> = new Set();

/** An in-memory store, a holder's and an observer's locks, and the observer's own clock. */
function world(staleMs: () => number = () => STALE_MS) {
  const clock = new FakeClock();
  const fs = new MemoryStoreFs(() => clock.now());
  fs.mkdirSync(RUNNING);
  const lockFs = memoryLockFs(fs);
  const locksOf = (nodeId: string): UriLocks =>
    new UriLocks({ runningDir: RUNNING, nodeId, host: 'h', pid: 1, clock, random: new SeededRandom(1), fs: lockFs });
  const holder = locksOf('holder');
  const observerLocks = locksOf('observer');
  const observer = new LockObserver(observerLocks, clock, staleMs);
  const staleNames = async (own: ReadonlySet<string> = NOTHING, ownLocks: ReadonlySet<string> = NOTHING): Promise<string[]> =>
    (await observer.scan(own, ownLocks)).stale.map((lock) => lock.lockName);
  return { clock, fs, holder, observerLocks, observer, staleNames };
}

describe("LockObserver: a lock is stale when its signature stood still for lockStale on the observer's monotonic clock", () => {
  it('is not stale before lockStale of an unmoving counter, and stale from then on', async () => {
    const w = world();
    const held = (await w.holder.acquire(LOCK, URI))!;
    expect(await w.staleNames()).toEqual([]); // first sighting
    w.clock.advance(STALE_MS - 1);
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(1);
    const { stale } = await w.observer.scan(NOTHING);
    expect(stale).toEqual([
      { lockName: LOCK, signature: `${held.leaseId}:0`, owner: expect.objectContaining({ leaseId: held.leaseId, counter: 0 }), unchangedMs: STALE_MS },
    ]);
  });

  it('a heartbeat restarts the observation, however long the lock has been held', async () => {
    const w = world();
    const held = (await w.holder.acquire(LOCK, URI))!;
    await w.staleNames();
    for (let i = 0; i < 10; i++) {
      w.clock.advance(STALE_MS - 1);
      await held.heartbeat();
      expect(await w.staleNames()).toEqual([]);
    }
    w.clock.advance(STALE_MS - 1);
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(1);
    expect(await w.staleNames()).toEqual([LOCK]);
  });

  it('counts from its own first sighting, never from the times a record states (wall clocks are never compared)', async () => {
    const w = world();
    // A record that claims a heartbeat far in the past, and one that claims one in the future.
    const record = (leaseId: string, heartbeatAt: number): string =>
      JSON.stringify({ version: 1, nodeId: 'x', pid: 1, host: 'h', leaseId, counter: 1, uri: URI, acquiredAt: heartbeatAt, heartbeatAt });
    for (const [lock, lease, at] of [
      [LOCK, 'x.old', 0],
      [OTHER, 'x.future', w.clock.now() + 365 * 24 * 3600_000],
    ] as const) {
      w.fs.mkdirSync(`${RUNNING}/${lock}/${lease}`);
      w.fs.writeRaw(`${RUNNING}/${lock}/${lease}/owner.json`, record(lease, at));
    }
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(STALE_MS);
    expect((await w.staleNames()).sort()).toEqual([LOCK, OTHER]);
  });

  it('a new lease at the same lock name, even with the same counter, is a new observation', async () => {
    const w = world();
    const first = (await w.holder.acquire(LOCK, URI))!;
    await w.staleNames();
    w.clock.advance(STALE_MS - 1);
    await first.release();
    await w.holder.acquire(LOCK, URI); // counter 0 again, new leaseId
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(STALE_MS - 1);
    expect(await w.staleNames()).toEqual([]);
  });

  it('a lock that went away and came back is observed afresh', async () => {
    const w = world();
    await w.holder.acquire(LOCK, URI);
    await w.staleNames();
    w.clock.advance(STALE_MS - 1);
    await w.fs.rename(`${RUNNING}/${LOCK}`, `${RUNNING}/aside`);
    expect(await w.staleNames()).toEqual([]);
    await w.fs.rename(`${RUNNING}/aside`, `${RUNNING}/${LOCK}`);
    w.clock.advance(1);
    expect(await w.staleNames()).toEqual([]); // a new first sighting
    w.clock.advance(STALE_MS - 1);
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(1);
    expect(await w.staleNames()).toEqual([LOCK]);
  });

  it('judges a lock folder without an owner record (holder died after the mkdir) the same way, as signature "none"', async () => {
    const w = world();
    w.fs.mkdirSync(`${RUNNING}/${LOCK}`);
    await w.staleNames();
    w.clock.advance(STALE_MS);
    const { stale } = await w.observer.scan(NOTHING);
    expect(stale).toEqual([{ lockName: LOCK, signature: 'none', owner: undefined, unchangedMs: STALE_MS }]);
  });

  it('a record that cannot be read (a FIFO planted as owner.json) makes the lock ownerless, and the scan goes on', async () => {
    const w = world();
    w.fs.mkdirSync(`${RUNNING}/${LOCK}/x.t1`);
    w.fs.makeSpecial(`${RUNNING}/${LOCK}/x.t1/owner.json`, 'fifo');
    await w.holder.acquire(OTHER, URI);
    await w.staleNames();
    w.clock.advance(STALE_MS);
    const { stale } = await w.observer.scan(NOTHING);
    expect(stale.map((lock) => [lock.lockName, lock.signature])).toEqual(
      expect.arrayContaining([
        [LOCK, 'none'],
        [OTHER, expect.stringMatching(/^holder\./)],
      ]),
    );
  });

  it("never judges the observer's own leases or locks stale", async () => {
    const w = world();
    const mine = (await w.observerLocks.acquire(LOCK, URI))!;
    await w.observerLocks.acquire(OTHER, URI);
    await w.staleNames(new Set([mine.leaseId]), new Set([OTHER]));
    w.clock.advance(10 * STALE_MS);
    expect(await w.staleNames(new Set([mine.leaseId]), new Set([OTHER]))).toEqual([]);
    // Once they are no longer its own (lost, or this node restarted), they are observed like any other.
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(STALE_MS);
    expect((await w.staleNames()).sort()).toEqual([LOCK, OTHER]);
  });

  it('uses the lockStale in force at each scan (a reload changes it)', async () => {
    let staleMs = STALE_MS;
    const w = world(() => staleMs);
    await w.holder.acquire(LOCK, URI);
    await w.staleNames();
    w.clock.advance(STALE_MS / 2);
    expect(await w.staleNames()).toEqual([]);
    staleMs = STALE_MS / 2;
    expect(await w.staleNames()).toEqual([LOCK]);
  });

  it('forget() starts a fresh observation after the node acted on a lock', async () => {
    const w = world();
    await w.holder.acquire(LOCK, URI);
    await w.staleNames();
    w.clock.advance(STALE_MS);
    expect(await w.staleNames()).toEqual([LOCK]);
    w.observer.forget(LOCK);
    expect(await w.staleNames()).toEqual([]);
    w.clock.advance(STALE_MS);
    expect(await w.staleNames()).toEqual([LOCK]);
  });

  it('reports a tombstone as abandoned once it has stood for lockStale (its breaker died), and forgets one that went away', async () => {
    const w = world();
    const tomb = `${LOCK}.tomb.node-x.t1`;
    const gone = `${OTHER}.tomb.node-y.t1`;
    w.fs.mkdirSync(`${RUNNING}/${tomb}`);
    w.fs.mkdirSync(`${RUNNING}/${gone}`);
    expect((await w.observer.scan(NOTHING)).abandonedTombstones).toEqual([]);
    w.clock.advance(STALE_MS - 1);
    await w.fs.rmdir(`${RUNNING}/${gone}`);
    expect((await w.observer.scan(NOTHING)).abandonedTombstones).toEqual([]);
    w.fs.mkdirSync(`${RUNNING}/${gone}`); // the same name again: a new sighting
    w.clock.advance(1);
    expect((await w.observer.scan(NOTHING)).abandonedTombstones).toEqual([tomb]);
  });
  /** An observer whose looks at running/ take time: `during` runs, the clock having moved `ms`, before the look. */
  function slowObserver(w: ReturnType<typeof world>, method: 'readOwner' | 'listEntries', ms: number, during: () => Promise<void>): LockObserver {
    let slowOnce: (() => Promise<void>) | undefined = async () => {
      w.clock.advance(ms);
      await during();
    };
    const looking = async <T>(look: () => Promise<T>): Promise<T> => {
      const slow = slowOnce;
      slowOnce = undefined;
      await slow?.();
      return look();
    };
    const locks = Object.assign(Object.create(w.observerLocks) as UriLocks, {
      [method]: (...args: never[]) => looking(() => (w.observerLocks[method] as (...a: never[]) => Promise<unknown>)(...args)),
    });
    return new LockObserver(locks, w.clock, () => STALE_MS);
  }

  it('counts a lock from when its record was read, not from when a slow scan started', async () => {
    const w = world();
    const held = (await w.holder.acquire(LOCK, URI))!;
    // The scan starts at 0 but reaches this lock at 4,000, just after the holder's heartbeat.
    const observer = slowObserver(w, 'readOwner', 4000, async () => void (await held.heartbeat()));
    const stale = async (): Promise<number[]> => (await observer.scan(NOTHING)).stale.map((lock) => lock.unchangedMs);
    expect(await stale()).toEqual([]);
    w.clock.advance(STALE_MS - 1);
    expect(await stale()).toEqual([]);
    w.clock.advance(1);
    expect(await stale()).toEqual([STALE_MS]);
  });

  it('counts a tombstone from when the listing that found it ended', async () => {
    const w = world();
    const tomb = `${LOCK}.tomb.node-x.t1`;
    const observer = slowObserver(w, 'listEntries', 4000, async () => w.fs.mkdirSync(`${RUNNING}/${tomb}`));
    const abandoned = async (): Promise<string[]> => (await observer.scan(NOTHING)).abandonedTombstones;
    expect(await abandoned()).toEqual([]);
    w.clock.advance(STALE_MS - 1);
    expect(await abandoned()).toEqual([]);
    w.clock.advance(1);
    expect(await abandoned()).toEqual([tomb]);
  });
});
