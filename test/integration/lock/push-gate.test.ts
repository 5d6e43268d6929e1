import * as fsp from 'node:fs/promises';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HeldLocks } from '../../../src/lock/held-locks.js';
import { UriLocks, type LockFs } from '../../../src/lock/uri-lock.js';
import type { Log } from '../../../src/runtime/log.js';
import { JobHeartbeat } from '../../../src/schedule/job-heartbeat.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const LOCK = 'b'.repeat(40);
const URI = 'git://example.com/app.git';
const LOCK_STALE_MS = 8000;
const TRUST_MS = LOCK_STALE_MS / 3;
const PID = 4242;

type RenameHook = (to: string) => Promise<void>;

/**
 * A real lock in a real folder, and the heartbeat of one push job under it. `afterRename` runs
 * after each completed rename (the owner record's replace is one), as a pause of the holder there would.
 */
async function setup(): Promise<{
  runningDir: string;
  clock: FakeClock;
  heartbeat: JobHeartbeat;
  warnings: string[];
  afterRename: (hook: RenameHook) => void;
}> {
  const runningDir = join(tempDir('refrelay-push-gate'), 'running');
  mkdirSync(runningDir);
  const clock = new FakeClock();
  let hook: RenameHook | undefined;
  const fs = {
    ...fsp,
    rename: (async (from: string, to: string) => {
      await fsp.rename(from, to);
      const once = hook;
      hook = undefined;
      await once?.(to);
    }) as LockFs['rename'],
  } as LockFs;
  const locks = new UriLocks({ runningDir, nodeId: 'node-a', host: 'h', pid: 1, clock, random: new SeededRandom(3), fs, trustMs: () => TRUST_MS });
  // As the daemon hands leases to push jobs.
  const held = await new HeldLocks(
    locks,
    (name, lease) => join(runningDir, '..', 'done', `${name}.${lease}`),
    (folder) => join(runningDir, '..', 'waiting', folder),
    clock,
    () => undefined,
  ).acquire(LOCK, URI);
  const warnings: string[] = [];
  const log: Log = { debug: () => undefined, info: () => undefined, warn: (_fields, message) => warnings.push(message ?? ''), error: () => undefined };
  const timers = { every: () => () => undefined, after: () => () => undefined };
  const identifyPush = (): { pushStartTime: number; bootId: string } => ({ pushStartTime: 25756, bootId: 'boot-1' });
  const heartbeat = new JobHeartbeat({ clock, log, timers, identifyPush }, held!, URI, new AbortController().signal, LOCK_STALE_MS, clock.monotonic());
  return { runningDir, clock, heartbeat, warnings, afterRename: (next) => (hook = next) };
}

function recordIn(dir: string): { leaseId: string; pushPid?: number } {
  const [lease] = readdirSync(dir);
  return JSON.parse(readFileSync(join(dir, lease!, 'owner.json'), 'utf8')) as { leaseId: string; pushPid?: number };
}

describe('git starts only under a record that names it, in a lock still ours (job-heartbeat.ts onPushSpawn)', () => {
  it('answers yes once the record names the push', async () => {
    const { runningDir, heartbeat, warnings } = await setup();

    expect(await heartbeat.onPushSpawn(PID)).toBe(true);

    expect(heartbeat.signal.aborted).toBe(false);
    expect(recordIn(join(runningDir, LOCK)).pushPid).toBe(PID);
    expect(warnings).toEqual([]);
  });

  it('answers no to a holder paused past lockStale right after the write, whose lock a peer took over meanwhile', async () => {
    const { runningDir, clock, heartbeat, warnings, afterRename } = await setup();
    const tomb = join(runningDir, `${LOCK}.tomb.node-b.1`);
    afterRename(async (to) => {
      expect(to.endsWith('/owner.json')).toBe(true);
      clock.advance(LOCK_STALE_MS + 2000);
      await fsp.rename(join(runningDir, LOCK), tomb);
    });

    expect(await heartbeat.onPushSpawn(PID)).toBe(false);

    expect(heartbeat.signal.aborted).toBe(true);
    expect(warnings).toEqual(['lost the URI lock while holding it; aborting the push']);
    // The write itself went through before the pause: the tombstone's record names the push.
    expect(recordIn(tomb).pushPid).toBe(PID);
  });

  it('answers yes after a pause shorter than the trust window, in which no takeover can happen', async () => {
    const { runningDir, clock, heartbeat, afterRename } = await setup();
    afterRename(async () => clock.advance(TRUST_MS - 1));

    expect(await heartbeat.onPushSpawn(PID)).toBe(true);

    expect(heartbeat.signal.aborted).toBe(false);
    expect(recordIn(join(runningDir, LOCK)).pushPid).toBe(PID);
  });

  it('answers no when the record could not be written: no push runs that its lock does not name', async () => {
    const { runningDir, heartbeat, warnings, afterRename } = await setup();
    afterRename(async () => Promise.reject(Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' })));

    expect(await heartbeat.onPushSpawn(PID)).toBe(false);

    expect(heartbeat.signal.aborted).toBe(true);
    expect(warnings).toEqual(['lock heartbeat failed', 'could not record the push process in the lock; the push waits']);
    // The lock itself stays held: the job puts its tasks back and releases it.
    expect(readdirSync(join(runningDir, LOCK))).toHaveLength(1);
  });
});
