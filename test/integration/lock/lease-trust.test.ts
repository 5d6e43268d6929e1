import * as fsp from 'node:fs/promises';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LockObserver } from '../../../src/lock/lock-observer.js';
import { UriLocks, type LockFs } from '../../../src/lock/uri-lock.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const LOCK = 'b'.repeat(40);
const OTHER = 'c'.repeat(40);
const URI = 'git://example.com/app.git';
const TRUST_MS = 1000;

/** The real filesystem, counting owner-record reads. */
function countingFs(): { fs: LockFs; reads: () => number } {
  let reads = 0;
  const fs = {
    ...fsp,
    readFile: (async (path: string, encoding: BufferEncoding) => {
      reads++;
      return fsp.readFile(path, encoding);
    }) as LockFs['readFile'],
  } as LockFs;
  return { fs, reads: () => reads };
}

/** What a takeover does to the holder's paths: the whole lock folder renamed to a tombstone. */
async function takeOver(runningDir: string, lockName: string): Promise<void> {
  await fsp.rename(join(runningDir, lockName), join(runningDir, `${lockName}.tomb.thief.1`));
}

function setup(): { runningDir: string; clock: FakeClock; fs: LockFs; reads: () => number; locks: UriLocks } {
  const runningDir = join(tempDir('refrelay-trust'), 'running');
  mkdirSync(runningDir);
  const clock = new FakeClock();
  const { fs, reads } = countingFs();
  const locks = new UriLocks({ runningDir, nodeId: 'node-a', host: 'h', pid: 1, clock, random: new SeededRandom(3), fs, trustMs: () => TRUST_MS });
  return { runningDir, clock, fs, reads, locks };
}

describe("fencing with a trust window after the holder's own owner-record write", () => {
  it('within the window stillMine answers without reading the record; after it, it reads and sees a takeover', async () => {
    const { runningDir, clock, reads, locks } = setup();
    const held = await locks.acquire(LOCK, URI);
    expect(held).toBeDefined();
    clock.advance(TRUST_MS - 1);
    expect(await held!.stillMine()).toBe(true);
    expect(reads()).toBe(0);

    await takeOver(runningDir, LOCK);
    clock.advance(1);
    expect(await held!.stillMine()).toBe(false);
    expect(reads()).toBe(1);
    // Once lost, always lost: no more reads, no more trust.
    expect(await held!.stillMine()).toBe(false);
    expect(reads()).toBe(1);
  });

  it('a periodic heartbeat always reads, so a lock lost inside the window is found by the next beat and nothing is written', async () => {
    const { runningDir, clock, reads, locks } = setup();
    const held = await locks.acquire(LOCK, URI);
    await takeOver(runningDir, LOCK);
    clock.advance(10);
    expect(await held!.heartbeat()).toBe(false);
    expect(reads()).toBe(1);
    expect(await held!.stillMine()).toBe(false);
    // The tombstone holds the record as the holder left it: the late beat wrote nothing there.
    const tomb = join(runningDir, `${LOCK}.tomb.thief.1`);
    const [lease] = readdirSync(tomb);
    const owner = JSON.parse(await fsp.readFile(join(tomb, lease!, 'owner.json'), 'utf8')) as { counter: number; pushPid?: number };
    expect(owner).toMatchObject({ counter: 0 });
    expect(owner.pushPid).toBeUndefined();
  });

  it('the beat that records a new push process trusts the window, and after a takeover its write finds no lease folder', async () => {
    const { runningDir, clock, reads, locks } = setup();
    const held = await locks.acquire(LOCK, URI);
    await takeOver(runningDir, LOCK);
    clock.advance(10);
    expect(await held!.heartbeat({ pushPid: 42 })).toBe(false);
    expect(reads()).toBe(0);
    expect(await held!.stillMine()).toBe(false);
    const tomb = join(runningDir, `${LOCK}.tomb.thief.1`);
    const [lease] = readdirSync(tomb);
    expect(readdirSync(join(tomb, lease!))).toEqual(['owner.json']);
    const owner = JSON.parse(await fsp.readFile(join(tomb, lease!, 'owner.json'), 'utf8')) as { counter: number; pushPid?: number };
    expect(owner.pushPid).toBeUndefined();
  });

  it('on the real file system the beat after a takeover writes nothing and leaves no temp', async () => {
    const runningDir = join(tempDir('refrelay-trust'), 'running');
    mkdirSync(runningDir);
    const locks = new UriLocks({
      runningDir,
      nodeId: 'node-a',
      host: 'h',
      pid: 1,
      clock: new FakeClock(),
      random: new SeededRandom(3),
      trustMs: () => TRUST_MS,
    });
    const held = await locks.acquire(LOCK, URI);
    expect(await held!.heartbeat({ pushPid: 41 })).toBe(true);
    expect((await locks.readOwner(LOCK))?.pushPid).toBe(41);
    await takeOver(runningDir, LOCK);
    expect(await held!.heartbeat({ pushPid: 42 })).toBe(false);
    const tomb = join(runningDir, `${LOCK}.tomb.thief.1`);
    const [lease] = readdirSync(tomb);
    expect(readdirSync(join(tomb, lease!))).toEqual(['owner.json']);
    const owner = JSON.parse(await fsp.readFile(join(tomb, lease!, 'owner.json'), 'utf8')) as { counter: number; pushPid?: number };
    expect(owner).toMatchObject({ counter: 1, pushPid: 41 });
  });

  it('the periodic beats of a running push, the same pid again, read the record', async () => {
    const { clock, reads, locks } = setup();
    const held = await locks.acquire(LOCK, URI);
    expect(await held!.heartbeat({ pushPid: 42 })).toBe(true);
    expect(reads()).toBe(0);
    clock.advance(10);
    expect(await held!.heartbeat({ pushPid: 42 })).toBe(true);
    expect(reads()).toBe(1);
  });

  it('a successful heartbeat starts a new window', async () => {
    const { clock, reads, locks } = setup();
    const held = await locks.acquire(LOCK, URI);
    clock.advance(TRUST_MS + 5);
    expect(await held!.heartbeat()).toBe(true);
    const afterBeat = reads();
    clock.advance(TRUST_MS - 1);
    expect(await held!.stillMine()).toBe(true);
    expect(reads()).toBe(afterBeat);
  });

  it('without trustMs every check reads the record', async () => {
    const runningDir = join(tempDir('refrelay-trust'), 'running');
    mkdirSync(runningDir);
    const { fs, reads } = countingFs();
    const locks = new UriLocks({ runningDir, nodeId: 'node-a', host: 'h', pid: 1, clock: new FakeClock(), random: new SeededRandom(3), fs });
    const held = await locks.acquire(LOCK, URI);
    expect(await held!.stillMine()).toBe(true);
    expect(await held!.stillMine()).toBe(true);
    expect(reads()).toBe(2);
  });
});

describe('a lock taken over before its owner record is written', () => {
  it('is refused, not an error, and the new lock of the peer at the same path is left alone', async () => {
    const runningDir = join(tempDir('refrelay-trust'), 'running');
    mkdirSync(runningDir);
    const peerLease = join(runningDir, LOCK, 'node-b.peer');
    // This node pauses between making its lease folder and writing the record; meanwhile a peer
    // breaks the ownerless lock as stale and takes the URI itself.
    const fs = {
      ...fsp,
      mkdir: (async (path: string, options?: Parameters<typeof fsp.mkdir>[1]) => {
        const made = await fsp.mkdir(path, options);
        if (path.startsWith(join(runningDir, LOCK, 'node-a.'))) {
          await takeOver(runningDir, LOCK);
          await fsp.mkdir(peerLease, { recursive: true });
        }
        return made;
      }) as LockFs['mkdir'],
    } as LockFs;
    const locks = new UriLocks({
      runningDir,
      nodeId: 'node-a',
      host: 'h',
      pid: 1,
      clock: new FakeClock(),
      random: new SeededRandom(3),
      fs,
      trustMs: () => TRUST_MS,
    });
    expect(await locks.acquire(LOCK, URI)).toBeUndefined();
    expect(readdirSync(join(runningDir, LOCK))).toEqual(['node-b.peer']);
    const tomb = join(runningDir, `${LOCK}.tomb.thief.1`);
    const [lease] = readdirSync(tomb);
    expect(lease).toMatch(/^node-a\./);
    expect(readdirSync(join(tomb, lease!))).toEqual([]);
  });
});

describe("the lock observer and this node's own locks", () => {
  it("does not read the locks this process holds, and still judges a peer's lock stale", async () => {
    const { runningDir, clock, reads } = setup();
    const { fs: peerFs } = countingFs();
    const peer = new UriLocks({ runningDir, nodeId: 'node-b', host: 'h', pid: 2, clock, random: new SeededRandom(4), fs: peerFs });
    const { fs, reads: observerReads } = countingFs();
    const mine = new UriLocks({ runningDir, nodeId: 'node-a', host: 'h', pid: 1, clock, random: new SeededRandom(5), fs });
    const own = await mine.acquire(LOCK, URI);
    await peer.acquire(OTHER, URI);
    const observer = new LockObserver(mine, clock, () => 5000);

    await observer.scan(new Set([own!.leaseId]), new Set([LOCK]));
    expect(observerReads()).toBe(1); // the peer's record only
    clock.advance(5000);
    const { stale } = await observer.scan(new Set([own!.leaseId]), new Set([LOCK]));
    expect(stale.map((lock) => lock.lockName)).toEqual([OTHER]);
    expect(observerReads()).toBe(2);
    expect(reads()).toBe(0);
  });
});
