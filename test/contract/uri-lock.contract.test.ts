import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OWNER_FILE } from '../../src/lock/owner-record.js';
import { ownerSignature, type LockFs } from '../../src/lock/uri-lock.js';
import { lockEnvs, type LockEnv } from './support/lock-envs.js';
import { fsError } from './support/memory-store-fs.js';

const LOCK = 'a'.repeat(40);
const OTHER_LOCK = 'b'.repeat(40);
const URI = 'ssh://replica.example.com/project.git';
const TASK = `${'c'.repeat(40)}.json`;
const OTHER_TASK = `${'d'.repeat(40)}.json`;

/** The owner record of a lease as it is on disk. */
function recordAt(env: LockEnv, lockName: string, leaseId: string): Record<string, unknown> {
  return JSON.parse(env.read(`running/${lockName}/${leaseId}/${OWNER_FILE}`)) as Record<string, unknown>;
}

describe.each(lockEnvs())('URI lock contract (%s)', (_, makeEnv) => {
  describe('acquire', () => {
    it('one mkdir wins: the first node holds the lock, every later acquire is refused with undefined until it is released', async () => {
      const env = makeEnv();
      const a = env.locks('node-a');
      const b = env.locks('node-b');
      const held = await a.acquire(LOCK, URI);
      expect(held).toBeDefined();
      expect(await b.acquire(LOCK, URI)).toBeUndefined();
      // Exclusive per URI, not per node: the holder's own second attempt is refused as well.
      expect(await a.acquire(LOCK, URI)).toBeUndefined();
      // Another URI's lock is independent.
      expect(await b.acquire(OTHER_LOCK, URI)).toBeDefined();

      expect(await held!.release()).toBe(true);
      expect(await b.acquire(LOCK, URI)).toBeDefined();
    });

    it('writes the owner record in a lease folder named after its lease: node, pid, host, uri, counter 0', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      expect(held.leaseId).toMatch(/^node-a\.\S+$/);
      expect(held.claimName).toBe(`${LOCK}/${held.leaseId}`);
      expect(env.list(`running/${LOCK}`)).toEqual([held.leaseId]);
      expect(env.list(`running/${LOCK}/${held.leaseId}`)).toEqual([OWNER_FILE]);
      expect(recordAt(env, LOCK, held.leaseId)).toMatchObject({
        version: 1,
        nodeId: 'node-a',
        pid: 4242,
        host: 'test-host',
        leaseId: held.leaseId,
        counter: 0,
        uri: URI,
        acquiredAt: env.clock.now(),
        heartbeatAt: env.clock.now(),
      });
      // Any node reads the same owner back.
      expect(await env.locks('node-b').readOwner(LOCK)).toMatchObject({ nodeId: 'node-a', leaseId: held.leaseId, counter: 0 });
    });

    it('every acquisition is a new lease, even by the same node', async () => {
      const env = makeEnv();
      const a = env.locks('node-a');
      const first = (await a.acquire(LOCK, URI))!;
      await first.release();
      const second = (await a.acquire(LOCK, URI))!;
      expect(second.leaseId).not.toBe(first.leaseId);
    });

    it('never makes running/ itself: a store that is not there fails the acquire instead of growing one', async () => {
      const env = makeEnv();
      // The same locks, with running/ where an unmounted store's would be.
      const unmounted = env.locks('node-a', { wrapFs: (fs) => redirect(fs, env.runningDir, join(env.runningDir, '..', 'not-mounted', 'running')) });
      await expect(unmounted.acquire(LOCK, URI)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(env.exists('not-mounted')).toBe(false);
      expect(env.list('running')).toEqual([]);
    });

    /** node-a's locks, with a peer acting just before node-a makes its lease folder (node-a paused past lockStale there). */
    function pausedBeforeLease(env: LockEnv, peerActs: () => Promise<void>) {
      return env.locks('node-a', {
        wrapFs: (fs) =>
          around(fs, 'mkdir', async (path) => {
            if (path.startsWith(join(env.runningDir, LOCK, 'node-a.'))) await peerActs();
          }),
      });
    }

    it('a lock broken by a peer between the mkdir and the owner record counts as refused', async () => {
      const env = makeEnv();
      const peer = env.locks('node-b');
      const slow = pausedBeforeLease(env, async () => {
        expect(await peer.breakStale(LOCK, 'none')).toMatch(new RegExp(`^${LOCK}\\.tomb\\.node-b\\.`));
      });
      expect(await slow.acquire(LOCK, URI)).toBeUndefined();
      // Nothing of node-a's is left where the lock was; the tombstone is the breaker's to recover.
      expect(env.list('running').filter((name) => name === LOCK)).toEqual([]);
      expect(await peer.acquire(LOCK, URI)).toBeDefined();
    });

    // node-a's `mkdir <leaseId>` succeeds inside the peer's new lock folder; only a lease alone in
    // its lock folder holds the URI.
    it("a lock broken and taken again by a peer between the mkdir and the owner record counts as refused, and the peer's lock is left alone", async () => {
      const env = makeEnv();
      const peer = env.locks('node-b');
      let peerLease: string | undefined;
      const slow = pausedBeforeLease(env, async () => {
        await peer.breakStale(LOCK, 'none');
        peerLease = (await peer.acquire(LOCK, URI))!.leaseId;
      });
      expect(await slow.acquire(LOCK, URI)).toBeUndefined();
      expect(env.list(`running/${LOCK}`)).toEqual([peerLease]);
      expect(recordAt(env, LOCK, peerLease!)).toMatchObject({ nodeId: 'node-b' });
    });

    it('an owner record that cannot be written fails the acquire and leaves no ownerless lock behind', async () => {
      const env = makeEnv();
      const full = env.locks('node-a', { wrapFs: (fs) => failingWrites(fs, 'ENOSPC') });
      await expect(full.acquire(LOCK, URI)).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(env.list('running')).toEqual([]);
      // The URI is free for the next attempt at once (no takeover needed).
      expect(await env.locks('node-b').acquire(LOCK, URI)).toBeDefined();
    });
  });

  describe('acquire with the waiting folder moved in as the lease folder', () => {
    const FOLDER = LOCK;
    /** waiting/<FOLDER> with two tasks, as publishers leave it. */
    function waitingWithTasks(env: LockEnv): string {
      env.mkdir('waiting');
      env.mkdir(`waiting/${FOLDER}`);
      env.write(`waiting/${FOLDER}/${TASK}`, '{"task":1}');
      env.write(`waiting/${FOLDER}/${OTHER_TASK}`, '{"task":2}');
      return join(env.runningDir, '..', 'waiting', FOLDER);
    }

    it('renames the folder into the lock: its tasks are in the lease folder beside the owner record, and gone from waiting/', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI, waitingWithTasks(env)))!;
      expect(held.movedIn).toBe(true);
      expect(env.list(`running/${LOCK}/${held.leaseId}`)).toEqual([OTHER_TASK, TASK, OWNER_FILE].sort());
      expect(env.read(`running/${LOCK}/${held.leaseId}/${TASK}`)).toBe('{"task":1}');
      expect(env.list('waiting')).toEqual([]);
      expect(recordAt(env, LOCK, held.leaseId)).toMatchObject({ nodeId: 'node-a', leaseId: held.leaseId, counter: 0 });
    });

    it('makes the lease folder empty when the waiting folder is not there (a peer claimed it first)', async () => {
      const env = makeEnv();
      env.mkdir('waiting');
      const held = (await env.locks('node-a').acquire(LOCK, URI, join(env.runningDir, '..', 'waiting', FOLDER)))!;
      expect(held.movedIn).toBe(false);
      expect(env.list(`running/${LOCK}/${held.leaseId}`)).toEqual([OWNER_FILE]);
    });

    it('never writes the owner record through a symlink or into a file found under the folder name: it goes back, and the lease is made empty', async () => {
      const env = makeEnv();
      env.mkdir('waiting');
      env.mkdir('elsewhere');
      env.symlink(`waiting/${FOLDER}`, 'elsewhere');
      const held = (await env.locks('node-a').acquire(LOCK, URI, join(env.runningDir, '..', 'waiting', FOLDER)))!;
      expect(held.movedIn).toBe(false);
      expect(env.list(`running/${LOCK}/${held.leaseId}`)).toEqual([OWNER_FILE]);
      expect(env.list('waiting')).toEqual([FOLDER]);
      expect(env.list('elsewhere')).toEqual([]);
    });

    it('a lease that cannot record its owner gives the folder back to waiting/ with every task', async () => {
      const env = makeEnv();
      const full = env.locks('node-a', { wrapFs: (fs) => failingWrites(fs, 'ENOSPC') });
      await expect(full.acquire(LOCK, URI, waitingWithTasks(env))).rejects.toMatchObject({ code: 'ENOSPC' });
      expect(env.list(`waiting/${FOLDER}`)).toEqual([OTHER_TASK, TASK].sort());
      expect(env.list('running')).toEqual([]);
    });

    it("a lock broken and taken again by a peer before the folder moved in: refused, the folder goes back and the peer's lease is left alone", async () => {
      const env = makeEnv();
      const peer = env.locks('node-b');
      let peerLease: string | undefined;
      const slow = env.locks('node-a', {
        wrapFs: (fs) => {
          let paused = true;
          return {
            ...fs,
            rename: async (from: string, to: string) => {
              if (paused) {
                paused = false;
                await peer.breakStale(LOCK, 'none');
                peerLease = (await peer.acquire(LOCK, URI))!.leaseId;
              }
              return fs.rename(from, to);
            },
          } as LockFs;
        },
      });
      expect(await slow.acquire(LOCK, URI, waitingWithTasks(env))).toBeUndefined();
      expect(env.list(`waiting/${FOLDER}`)).toEqual([OTHER_TASK, TASK].sort());
      expect(env.list(`running/${LOCK}`)).toEqual([peerLease]);
      expect(env.list(`running/${LOCK}/${peerLease}`)).toEqual([OWNER_FILE]);
    });
  });

  describe('heartbeat', () => {
    it('advances the counter by one per beat, so observers see the signature move', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      const observer = env.locks('node-b');
      const before = ownerSignature(await observer.readOwner(LOCK));
      env.clock.advance(1000);
      expect(await held.heartbeat()).toBe(true);
      expect(await held.heartbeat()).toBe(true);
      const owner = await observer.readOwner(LOCK);
      expect(owner).toMatchObject({ leaseId: held.leaseId, counter: 2, heartbeatAt: env.clock.now() });
      expect(held.counter).toBe(2);
      expect(ownerSignature(owner)).not.toBe(before);
      expect(ownerSignature(owner)).toBe(`${held.leaseId}:2`);
      // No record temps are left behind in the lease folder.
      expect(env.list(`running/${LOCK}/${held.leaseId}`)).toEqual([OWNER_FILE]);
    });

    it('records the push process (pid, start time, boot id) for a same-host peer to prove an orphan by', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      expect(await held.heartbeat({ pushPid: 777, pushStartTime: 123456, bootId: 'boot-1' })).toBe(true);
      expect(await env.locks('node-b').readOwner(LOCK)).toMatchObject({ pushPid: 777, pushStartTime: 123456, bootId: 'boot-1', counter: 1 });
      // Later beats keep them.
      expect(await held.heartbeat()).toBe(true);
      expect(await env.locks('node-b').readOwner(LOCK)).toMatchObject({ pushPid: 777, counter: 2 });
    });

    it("remembers when its last successful record write began, on the monotonic clock (the holder's stop deadline counts from it)", async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      const acquiredAt = env.clock.monotonic();
      expect(held.lastWriteAt).toBe(acquiredAt);
      env.clock.advance(500);
      await held.heartbeat();
      expect(held.lastWriteAt).toBe(acquiredAt + 500);
    });
  });

  describe('stale takeover (breakStale)', () => {
    it('renames the lock with its claim to a tombstone only one breaker gets; the URI is free again', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      env.write(`running/${LOCK}/${held.leaseId}/${TASK}`, '{}');
      const b = env.locks('node-b');
      const c = env.locks('node-c');
      const signature = ownerSignature(await b.readOwner(LOCK));

      const tombstone = await b.breakStale(LOCK, signature);
      expect(tombstone).toMatch(new RegExp(`^${LOCK}\\.tomb\\.node-b\\.`));
      // The loser of the race finds nothing to break.
      expect(await c.breakStale(LOCK, signature)).toBeUndefined();
      expect(env.list('running')).toEqual([tombstone]);
      expect(env.list(`running/${tombstone}`)).toEqual([held.leaseId]);
      expect(env.list(`running/${tombstone}/${held.leaseId}`)).toEqual([TASK, OWNER_FILE].sort());
      expect(await b.listEntries()).toEqual({ locks: [], tombstones: [tombstone] });
      expect(await c.acquire(LOCK, URI)).toBeDefined();
    });

    it('does not break a lock whose counter moved since it was judged stale', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      const b = env.locks('node-b');
      const judged = ownerSignature(await b.readOwner(LOCK));
      await held.heartbeat();
      expect(await b.breakStale(LOCK, judged)).toBeUndefined();
      expect(env.list('running')).toEqual([LOCK]);
      expect(await held.stillMine()).toBe(true);
    });

    it('breaks a lock folder without an owner record (its holder died after the mkdir) by the signature "none"', async () => {
      const env = makeEnv();
      env.mkdir(`running/${LOCK}`);
      const b = env.locks('node-b');
      expect(await b.readOwner(LOCK)).toBeUndefined();
      expect(ownerSignature(undefined)).toBe('none');
      expect(await b.breakStale(LOCK, 'none')).toMatch(new RegExp(`^${LOCK}\\.tomb\\.node-b\\.`));
      expect(await b.acquire(LOCK, URI)).toBeDefined();
    });
  });

  describe('fencing by lease path', () => {
    async function takenOver(env: LockEnv, options: { trustMs?: number } = {}) {
      const held = (await env.locks('node-a', options).acquire(LOCK, URI))!;
      env.write(`running/${LOCK}/${held.leaseId}/${TASK}`, '{}');
      const peer = env.locks('node-b');
      const tombstone = (await peer.breakStale(LOCK, ownerSignature(await peer.readOwner(LOCK))))!;
      const peerHeld = (await peer.acquire(LOCK, URI))!;
      return { held, tombstone, peerHeld };
    }

    it("after a takeover the late holder's heartbeat, fence and release fail and touch nothing of the new holder's", async () => {
      const env = makeEnv();
      const { held, tombstone, peerHeld } = await takenOver(env);
      const before = { running: env.list('running'), lock: env.list(`running/${LOCK}`), record: env.read(`running/${LOCK}/${peerHeld.leaseId}/${OWNER_FILE}`) };

      expect(await held.stillMine()).toBe(false);
      expect(await held.heartbeat()).toBe(false);
      expect(await held.release()).toBe(false);
      expect(await held.retire(join(env.doneDir, `${LOCK}.${held.leaseId}`), () => true)).toBe(false);

      expect(env.list('running')).toEqual(before.running);
      expect(env.list(`running/${LOCK}`)).toEqual(before.lock);
      expect(env.read(`running/${LOCK}/${peerHeld.leaseId}/${OWNER_FILE}`)).toBe(before.record);
      expect(env.list('done')).toEqual([]);
      // The broken claim is intact in the tombstone, for the breaker to recover.
      expect(env.list(`running/${tombstone}/${held.leaseId}`)).toEqual([TASK, OWNER_FILE].sort());
      expect(await peerHeld.stillMine()).toBe(true);
    });

    it('a heartbeat notices the loss even inside the trust window (periodic beats always read)', async () => {
      const env = makeEnv();
      const { held, peerHeld } = await takenOver(env, { trustMs: 60_000 });
      expect(await held.heartbeat()).toBe(false);
      expect(await held.stillMine()).toBe(false);
      expect(await peerHeld.stillMine()).toBe(true);
    });

    it("stillMine trusts the holder's own last write for trustMs, then reads the record again", async () => {
      const env = makeEnv();
      const { held } = await takenOver(env, { trustMs: 1000 });
      // Within the window after its last write no takeover can have happened yet, so it is not read.
      expect(await held.stillMine()).toBe(true);
      env.clock.advance(1000);
      expect(await held.stillMine()).toBe(false);
    });

    it('a lock lost to an ownerless break stays lost for its holder (no record is ever written back)', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      const peer = env.locks('node-b');
      await peer.breakStale(LOCK, ownerSignature(await peer.readOwner(LOCK)));
      expect(await held.heartbeat()).toBe(false);
      expect(env.list('running').filter((name) => name === LOCK)).toEqual([]);
    });
  });

  describe('release', () => {
    it('removes owner record, lease folder and lock folder', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      expect(await held.release()).toBe(true);
      expect(env.list('running')).toEqual([]);
      // A second release has nothing left that is its own.
      expect(await held.release()).toBe(false);
    });

    it('moves a lease folder a reader keeps non-empty (.nfs*) aside as a tombstone, and frees the URI', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      env.write(`running/${LOCK}/${held.leaseId}/.nfs000000001`, '');
      expect(await held.release()).toBe(true);
      expect(env.list('running')).toEqual([`${LOCK}.tomb.${held.leaseId}`]);
      expect(await env.locks('node-b').listEntries()).toEqual({ locks: [], tombstones: [`${LOCK}.tomb.${held.leaseId}`] });
      expect(await env.locks('node-b').acquire(LOCK, URI)).toBeDefined();
    });
  });

  describe('retire', () => {
    it('moves the lease folder with its pushed tasks to done/ in one step and frees the URI', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      env.write(`running/${LOCK}/${held.leaseId}/${TASK}`, '{"pushed":true}');
      let seen: readonly string[] = [];
      const to = join(env.doneDir, `${LOCK}.${held.leaseId}`);
      expect(
        await held.retire(to, (entries) => {
          seen = entries;
          return true;
        }),
      ).toBe(true);
      expect([...seen].sort()).toEqual([TASK, OWNER_FILE].sort());
      expect(env.list('running')).toEqual([]);
      expect(env.list('done')).toEqual([`${LOCK}.${held.leaseId}`]);
      expect(env.list(`done/${LOCK}.${held.leaseId}`)).toEqual([TASK, OWNER_FILE].sort());
      expect(env.read(`done/${LOCK}.${held.leaseId}/${TASK}`)).toBe('{"pushed":true}');
      expect(await held.stillMine()).toBe(false);
      expect(await env.locks('node-b').acquire(LOCK, URI)).toBeDefined();
    });

    it('refuses when the lease holds a file the push did not finish: throws and moves nothing, the lock still held', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      env.write(`running/${LOCK}/${held.leaseId}/${TASK}`, '{}');
      await expect(held.retire(join(env.doneDir, `${LOCK}.${held.leaseId}`), () => false)).rejects.toThrow(/did not finish/);
      expect(env.list('done')).toEqual([]);
      expect(env.list(`running/${LOCK}/${held.leaseId}`)).toEqual([TASK, OWNER_FILE].sort());
      expect(await held.stillMine()).toBe(true);
    });

    it('a destination that is not there throws and leaves the lease and lock in place', async () => {
      const env = makeEnv();
      const held = (await env.locks('node-a').acquire(LOCK, URI))!;
      await expect(held.retire(join(env.doneDir, 'missing', `${LOCK}.${held.leaseId}`), () => true)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(env.list(`running/${LOCK}`)).toEqual([held.leaseId]);
      expect(await held.stillMine()).toBe(true);
    });
  });

  describe('reading owners from a shared store', () => {
    it('lists only 40-hex lock folders and their tombstones, ignoring every other name', async () => {
      const env = makeEnv();
      await env.locks('node-a').acquire(LOCK, URI);
      env.mkdir(`running/${OTHER_LOCK}.tomb.node-x.t1`);
      env.mkdir('running/not-a-lock');
      env.write(`running/${'d'.repeat(40)}.json`, '{}');
      env.mkdir(`running/${'E'.repeat(40)}`);
      expect(await env.locks('node-b').listEntries()).toEqual({ locks: [LOCK], tombstones: [`${OTHER_LOCK}.tomb.node-x.t1`] });
    });

    it('takes an owner only from a real lease folder whose record names that lease', async () => {
      const env = makeEnv();
      const reader = env.locks('node-b');
      const record = (leaseId: string): string =>
        JSON.stringify({ version: 1, nodeId: 'node-x', pid: 1, host: 'h', leaseId, counter: 3, uri: URI, acquiredAt: 0, heartbeatAt: 0 });
      env.mkdir(`running/${LOCK}/node-x.t1`);
      env.write(`running/${LOCK}/node-x.t1/${OWNER_FILE}`, record('node-x.t2'));
      expect(await reader.readOwner(LOCK)).toBeUndefined();
      env.write(`running/${LOCK}/node-x.t1/${OWNER_FILE}`, record('node-x.t1'));
      expect(await reader.readOwner(LOCK)).toMatchObject({ leaseId: 'node-x.t1', counter: 3 });
    });

    it('a lock folder whose entries this node may not look at (listable, not searchable: EACCES) is ownerless, never a throw', async () => {
      const env = makeEnv();
      env.mkdir(`running/${LOCK}/node-x.t1`);
      const denied = (fs: LockFs): LockFs => ({
        ...fs,
        lstat: (async (path: string) => {
          if (path.startsWith(`${env.runningDir}/${LOCK}/`)) throw fsError('EACCES', 'lstat', path);
          return fs.lstat(path);
        }) as LockFs['lstat'],
      });
      const reader = env.locks('node-b', { wrapFs: denied });
      expect(await reader.readOwner(LOCK)).toBeUndefined();
      expect(await reader.breakStale(LOCK, 'none')).toMatch(new RegExp(`^${LOCK}\\.tomb\\.node-b\\.`));
    });

    it('an owner record that is hostile (FIFO, symlinked lease folder, oversized, not JSON, fields missing) makes the lock ownerless, never blocks or throws', async () => {
      const lease = 'node-x.t1';
      const lockDir = `running/${LOCK}`;
      const good = JSON.stringify({ version: 1, nodeId: 'node-x', pid: 1, host: 'h', leaseId: lease, counter: 3, uri: URI, acquiredAt: 0, heartbeatAt: 0 });
      const withLease = (env: LockEnv): void => env.mkdir(`${lockDir}/${lease}`);
      const cases: Array<[string, (env: LockEnv) => void]> = [
        ['a FIFO', (env) => (withLease(env), env.mkfifo(`${lockDir}/${lease}/${OWNER_FILE}`))],
        [
          'a symlinked lease folder',
          (env) => {
            env.mkdir(`elsewhere/${lease}`);
            env.write(`elsewhere/${lease}/${OWNER_FILE}`, good);
            env.mkdir(lockDir);
            env.symlink(`${lockDir}/${lease}`, `elsewhere/${lease}`);
          },
        ],
        ['an oversized record', (env) => (withLease(env), env.writeSized(`${lockDir}/${lease}/${OWNER_FILE}`, 2 * 1024 * 1024))],
        ['text that is not JSON', (env) => (withLease(env), env.write(`${lockDir}/${lease}/${OWNER_FILE}`, '{"nodeId": "node-x", "leaseId"'))],
        [
          'a record without a counter',
          (env) => (withLease(env), env.write(`${lockDir}/${lease}/${OWNER_FILE}`, JSON.stringify({ nodeId: 'node-x', leaseId: lease }))),
        ],
        ['a folder where the record should be', (env) => (withLease(env), env.mkdir(`${lockDir}/${lease}/${OWNER_FILE}`))],
        ['a lock "folder" that is a file', (env) => env.write(lockDir, good)],
      ];
      for (const [what, plant] of cases) {
        const env = makeEnv();
        plant(env);
        const reader = env.locks('node-b');
        expect(await reader.readOwner(LOCK), what).toBeUndefined();
        // The lock is judged (and broken) as ownerless; a planted file in place of the lock folder is broken the same way.
        expect(await reader.breakStale(LOCK, 'none'), what).toMatch(new RegExp(`^${LOCK}\\.tomb\\.node-b\\.`));
      }
    });
  });
});

/** `fs` with `method` running `before(path)` first. */
function around(fs: LockFs, method: 'mkdir', before: (path: string) => Promise<void>): LockFs {
  const original = fs[method].bind(fs) as (path: string) => Promise<unknown>;
  return {
    ...fs,
    [method]: async (path: string) => {
      await before(path);
      return original(path);
    },
  } as unknown as LockFs;
}

/** `fs` whose file writes fail with `code`, as on a full or read-only store. */
function failingWrites(fs: LockFs, code: string): LockFs {
  const fail = async (path: string): Promise<never> => {
    throw fsError(code, 'write', path);
  };
  return { ...fs, writeFile: fail } as unknown as LockFs;
}

/** `fs` that sees `to` wherever the lock asks for `from`. */
function redirect(fs: LockFs, from: string, to: string): LockFs {
  const map = (path: string): string => (path.startsWith(from) ? to + path.slice(from.length) : path);
  const wrap =
    <A extends unknown[]>(call: (path: string, ...rest: A) => Promise<unknown>) =>
    (path: string, ...rest: A) =>
      call(map(path), ...rest);
  return {
    ...fs,
    mkdir: wrap(fs.mkdir.bind(fs) as (path: string) => Promise<unknown>),
    writeFile: wrap(fs.writeFile.bind(fs) as (path: string, data: string) => Promise<unknown>),
    readFile: wrap(fs.readFile.bind(fs) as (path: string) => Promise<unknown>),
    readdir: wrap(fs.readdir.bind(fs) as (path: string) => Promise<unknown>),
    lstat: wrap(fs.lstat.bind(fs) as (path: string) => Promise<unknown>),
    unlink: wrap(fs.unlink.bind(fs) as (path: string) => Promise<unknown>),
    rmdir: wrap(fs.rmdir.bind(fs) as (path: string) => Promise<unknown>),
    rename: (a: string, b: string) => fs.rename(map(a), map(b)),
  } as unknown as LockFs;
}
