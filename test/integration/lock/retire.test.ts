import * as fsp from 'node:fs/promises';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UriLocks } from '../../../src/lock/uri-lock.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const LOCK = 'd'.repeat(40);
const URI = 'git://example.com/app.git';
const TASK = `${'e'.repeat(40)}.json`;
const OTHER_TASK = `${'f'.repeat(40)}.json`;
/** What the push job passes: the owner record, dot files and the tasks it pushed. */
const onlyPushed =
  (pushed: string[]) =>
  (entries: readonly string[]): boolean =>
    entries.every((name) => name === 'owner.json' || name.startsWith('.') || pushed.includes(name));

function setup(): { runningDir: string; doneDir: string; locks: UriLocks } {
  const root = tempDir('refrelay-retire');
  const runningDir = join(root, 'running');
  const doneDir = join(root, 'done');
  mkdirSync(runningDir);
  mkdirSync(doneDir);
  const locks = new UriLocks({ runningDir, nodeId: 'node-a', host: 'h', pid: 1, clock: new FakeClock(), random: new SeededRandom(5), trustMs: () => 1000 });
  return { runningDir, doneDir, locks };
}

describe('retiring a lease: release and finish in one rename', () => {
  it('moves the lease folder with its owner record and finished tasks to done/ and removes the lock folder', async () => {
    const { runningDir, doneDir, locks } = setup();
    const held = (await locks.acquire(LOCK, URI))!;
    writeFileSync(join(runningDir, LOCK, held.leaseId, TASK), '{}');
    const target = join(doneDir, `${LOCK}.${held.leaseId}`);

    expect(await held.retire(target, onlyPushed([TASK]))).toBe(true);

    expect(readdirSync(runningDir)).toEqual([]);
    expect(readdirSync(target).sort()).toEqual([TASK, 'owner.json']);
    expect(await held.stillMine()).toBe(false);
    // The URI can be locked again at once.
    expect(await locks.acquire(LOCK, URI)).toBeDefined();
  });

  it('after a takeover moves nothing: the tasks stay in the tombstone for the new owner to recover', async () => {
    const { runningDir, doneDir, locks } = setup();
    const held = (await locks.acquire(LOCK, URI))!;
    writeFileSync(join(runningDir, LOCK, held.leaseId, TASK), '{}');
    const tomb = join(runningDir, `${LOCK}.tomb.thief.1`);
    await fsp.rename(join(runningDir, LOCK), tomb);
    // A new holder took the URI meanwhile.
    const thief = new UriLocks({ runningDir, nodeId: 'node-b', host: 'h', pid: 2, clock: new FakeClock(), random: new SeededRandom(9) });
    const newLease = (await thief.acquire(LOCK, URI))!;

    expect(await held.retire(join(doneDir, `${LOCK}.${held.leaseId}`), onlyPushed([TASK]))).toBe(false);

    expect(readdirSync(doneDir)).toEqual([]);
    expect(readdirSync(join(tomb, held.leaseId)).sort()).toEqual([TASK, 'owner.json']);
    expect(readdirSync(join(runningDir, LOCK))).toEqual([newLease.leaseId]);
    expect(await newLease.stillMine()).toBe(true);
  });

  it('refuses, moving nothing and keeping the lock, when the folder holds a task the push did not finish', async () => {
    const { runningDir, doneDir, locks } = setup();
    const held = (await locks.acquire(LOCK, URI))!;
    const lease = join(runningDir, LOCK, held.leaseId);
    writeFileSync(join(lease, TASK), '{}');
    // Claimed, but the claim's answer was lost (a network filesystem's retried rename said ENOENT).
    writeFileSync(join(lease, OTHER_TASK), '{}');

    await expect(held.retire(join(doneDir, `${LOCK}.${held.leaseId}`), onlyPushed([TASK]))).rejects.toThrow(/holds files this push did not finish/);

    expect(readdirSync(doneDir)).toEqual([]);
    expect(readdirSync(lease).sort()).toEqual([TASK, OTHER_TASK, 'owner.json'].sort());
    expect(await held.stillMine()).toBe(true);
  });

  it('when done/ is missing it throws and keeps the lock, so the caller can finish file by file and release', async () => {
    const { runningDir, doneDir, locks } = setup();
    await fsp.rmdir(doneDir);
    const held = (await locks.acquire(LOCK, URI))!;
    writeFileSync(join(runningDir, LOCK, held.leaseId, TASK), '{}');

    await expect(held.retire(join(doneDir, `${LOCK}.${held.leaseId}`), onlyPushed([TASK]))).rejects.toMatchObject({ code: 'ENOENT' });

    expect(await held.stillMine()).toBe(true);
    await fsp.unlink(join(runningDir, LOCK, held.leaseId, TASK));
    expect(await held.release()).toBe(true);
    expect(existsSync(join(runningDir, LOCK))).toBe(false);
  });
});
