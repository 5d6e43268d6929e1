import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { overlapsSeen } from '../../support/destination.js';
import { commitFile, git } from '../../support/git.js';
import { storeDir } from '../../support/refrelay-node.js';
import { namesIn, sleep, spooledTaskFiles, waitUntil, waitingTaskNames } from '../../support/store-files.js';
import { freePort } from '../../support/free-port.js';
import { hookPids, logTime, useCluster } from './cluster-fixture.js';
import { spoolDirFor } from '../../../src/intake/spool.js';

// Registered before the cluster's hooks, so it runs after them (hooks unwind as a stack): the
// nodes are dead before their store is unmounted.
const mounts: string[] = [];
afterEach(() => {
  for (const mountPoint of mounts.splice(0)) {
    spawnSync('umount', ['-l', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  }
});
const { cluster } = useCluster();

/** A small tmpfs of its own, or the reason this machine refuses one. */
function mountSmallTmpfs(): { mountPoint: string } | { refused: string } {
  const mountPoint = mkdtempSync(join(tmpdir(), 'refrelay-tmpfs-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint], { encoding: 'utf8' });
  if (result.status !== 0) {
    rmSync(mountPoint, { recursive: true, force: true });
    return { refused: `mount -t tmpfs refused (${result.error?.message ?? result.stderr.trim()}); run as root with CAP_SYS_ADMIN to test a full store` };
  }
  mounts.push(mountPoint);
  return { mountPoint };
}

/**
 * Writes `path` until the filesystem has no page left, even for a one-byte file. Running nodes
 * delete files meanwhile (temps, released locks), so the filler grows again until a probe file
 * cannot be written.
 */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  const probe = join(path, '..', 'probe');
  try {
    for (let attempt = 0; ; attempt++) {
      for (const size of [chunk.length, 4096, 1]) {
        try {
          for (;;) writeSync(fd, chunk, 0, size);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        }
      }
      if (spawnSync('sh', ['-c', `printf x > '${probe}'`]).status !== 0) break;
      rmSync(probe, { force: true });
      if (attempt === 100) throw new Error('the store could not be filled: something frees space as fast as it is written');
    }
  } finally {
    closeSync(fd);
    rmSync(probe, { force: true });
  }
}

/** Store failures in a row the node's /healthz reports (0 while it answers healthy or not at all). */
async function storeFailuresInARow(port: number): Promise<number> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/healthz`)).text();
    return Number(/(\d+) failures? in a row/.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

async function waitForAsync(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check());) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

function errorsOf(node: { logs(): Array<{ level: number; msg: string }> }): string[] {
  return [
    ...new Set(
      node
        .logs()
        .filter((line) => line.level >= 50)
        .map((line) => line.msg),
    ),
  ].sort();
}

describe('a store that fails under a running node', () => {
  it('a full disk: enqueue spools the update locally and exits 0 with nothing half-written in the store, the daemon keeps running, and once space is freed it forwards and delivers everything', async (ctx) => {
    const mount = mountSmallTmpfs();
    if ('refused' in mount) {
      console.warn(`skipped: ${mount.refused}`);
      return ctx.skip(mount.refused);
    }
    const port = await freePort();
    const c = cluster({ label: 'refrelay-full-disk', storePath: join(mount.mountPoint, 'store'), replication: [`httpListen = 127.0.0.1:${port}`] });
    await c.update('app', 'main');
    const queued = waitingTaskNames(c.store);
    expect(queued).toHaveLength(1);
    const filler = join(mount.mountPoint, 'filler');
    fill(filler);

    const node = c.start('node-1');
    await node.waitForLog((line) => line.msg === 'push job failed', 10_000);

    // A developer's push arrives now: its hook's enqueue spools the update on this machine's
    // disk and says so, and leaves nothing half-written in the store.
    const work = join(c.root, 'work', 'app');
    commitFile(work, 'during-full.txt', 'during\n');
    git(work, ['push', '-q', c.source(), 'HEAD:refs/heads/during']);
    const spooled = runCli(['enqueue', '--config', c.config, '--project', 'app', '--ref', 'refs/heads/during']);
    const spool = spoolDirFor(c.spoolRoot, c.store);
    expect(spooled.status, spooled.stderr).toBe(0);
    expect(spooled.stdout).toBe('');
    expect(spooled.stderr).toBe(
      `refrelay: the store at ${c.store} cannot be written (ENOSPC); the update is spooled in ${spool} and will be forwarded by a daemon of this store on this machine\n`,
    );
    expect(spooledTaskFiles(spool)).toHaveLength(1);
    expect(waitingTaskNames(c.store)).toEqual(queued);
    // The node's spool forwarder tries the store meanwhile, and each try has its temp in building/
    // until the write fails; a temp the enqueue left would stay.
    await waitUntil('nothing half-written in building/', () => namesIn(storeDir(c.store, 'building')).length === 0, 3000, 20);

    // Several failed store writes in a row on the full store: the node counts them and keeps going.
    await waitForAsync('three store failures in a row', async () => (await storeFailuresInARow(port)) >= 3, 15_000);
    expect(node.child.exitCode).toBeNull();
    expect(c.delivered()).toBe(false);
    // Failed writes clean up after themselves: no ownerless lock folder (it would block the URI
    // until a stale takeover), no heartbeat temps or clock probes piling up once per beat.
    // (A lock attempt may be in flight at any instant; a leaked folder would never go away.)
    await waitUntil('no lock folder in running/', () => namesIn(storeDir(c.store, 'running')).length === 0, 3000, 20);
    expect(namesIn(join(c.store, 'nodes')).filter((name) => name.startsWith('.'))).toEqual([]);
    expect(waitingTaskNames(c.store)).toEqual(queued);

    expect(spooledTaskFiles(spool)).toHaveLength(1);

    rmSync(filler);
    const freedAt = Date.now();
    // Nobody enqueues again: the daemon forwards the spooled update and delivers it.
    await c.waitDelivered();
    console.info(`full disk: delivered ${Date.now() - freedAt} ms after space was freed`);
    expect(spooledTaskFiles(spool)).toEqual([]);
    expect(node.child.exitCode).toBeNull();
    expect(overlapsSeen(c.dest())).toBe(0);
    expect(errorsOf(node)).toEqual(['push job failed']);
    // Nothing left behind by the failed writes: no temps, no ownerless lock folder.
    expect(namesIn(storeDir(c.store, 'building'))).toEqual([]);
    // (A lock attempt may be in flight at any instant; a leaked folder would never go away.)
    await waitUntil('no lock folder in running/', () => namesIn(storeDir(c.store, 'running')).length === 0, 3000, 20);
    // The node started on the full store, so its heartbeat record first appears at the beat after
    // space was freed, which may come after the delivery; until then only temps could be there.
    await waitUntil('the heartbeat record and nothing else in nodes/', () => namesIn(join(c.store, 'nodes')).join() === 'node-1.json', 5000, 20);
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
  });

  it('a store filling up under a running push: the holder aborts before its lock can be judged stale, no push overlaps, failures are logged once, and everything is delivered after space is freed', async (ctx) => {
    const mount = mountSmallTmpfs();
    if ('refused' in mount) {
      console.warn(`skipped: ${mount.refused}`);
      return ctx.skip(mount.refused);
    }
    // lockStale 2 s: node-1 must stop 1 s after its last heartbeat write; node-2 may take over after 2 s.
    const c = cluster({ label: 'refrelay-full-under-push', storePath: join(mount.mountPoint, 'store'), lockStale: '2s' });
    c.setPushSleep(8);
    await c.update('app', 'main');
    const node1 = c.start('node-1');
    await waitUntil('node-1 pushing', () => hookPids(c.dest()).length === 1, 10_000);
    // On another host: a same-host peer would kill node-1's push when it takes the lock over,
    // hiding the overlap this test is about.
    const node2 = c.start('node-2', {}, 'peer-host');
    // node-2 is up (its first heartbeat written) and watching node-1's lock before the store fills.
    await waitUntil('node-2 running', () => existsSync(join(c.store, 'nodes', 'node-2.json')), 10_000);

    const filler = join(mount.mountPoint, 'filler');
    fill(filler);
    const filledAt = Date.now();
    const abort = await node1.waitForLog(
      (line) => /^lock heartbeat writes failed for \d+ms; aborting the push before the lock can be judged stale$/.test(line.msg),
      5000,
    );
    expect(Number(abort.sinceMs)).toBeLessThan(2000);
    expect(logTime(abort) - filledAt).toBeLessThan(2000);

    // Full for twice lockStale. A holder that pushed on regardless would be judged stale and taken
    // over by node-2 (asserted below). Here both nodes' writes fail alike, so node-2 could not
    // push before space is back, and node-1 would notice the takeover at its next beat: the
    // overlap itself needs a store that takes node-2's writes but not node-1's, which a tmpfs
    // cannot stage; the takeover is what shows the holder did not stop in time.
    while (Date.now() - filledAt < 4000) await sleep(100);
    c.setPushSleep(0.2);
    rmSync(filler);
    await c.waitDelivered();
    expect(overlapsSeen(c.dest())).toBe(0);
    // node-1 gave its lock up before anyone could judge it stale: nothing was taken over.
    expect(node2.logs().filter((line) => line.msg === 'took over a stale URI lock')).toEqual([]);

    // Every node tried again and again while the store was full: one error line per message each.
    for (const node of [node1, node2]) {
      const errors = node.logs().filter((line) => line.level >= 50);
      const counts: Record<string, number> = {};
      for (const line of errors) counts[line.msg] = (counts[line.msg] ?? 0) + 1;
      console.info(`full store under a push: ${node.nodeId} error lines ${JSON.stringify(counts)}`);
      for (const count of Object.values(counts)) expect(count, node.nodeId).toBe(1);
      // Its heartbeat failed on every beat (every 200 ms for 4 s): one warning says so.
      expect(
        node.logs().filter((line) => line.msg === 'node heartbeat write failed'),
        node.nodeId,
      ).toHaveLength(1);
      expect(node.child.exitCode).toBeNull();
    }
    expect(node1.logs().some((line) => line.msg === 'the store works again')).toBe(true);
    await waitUntil('no lock folder in running/', () => namesIn(storeDir(c.store, 'running')).length === 0, 3000, 20);
  });

  it('waiting/ renamed away and back mid-run, again and again: the node logs failed passes, never stops, and delivers everything afterwards', async () => {
    const c = cluster({ label: 'refrelay-vanishing-folder', projects: ['app', 'lib'] });
    c.setPushSleep(0.2, 'app');
    c.setPushSleep(0.2, 'lib');
    const node = c.start('node-1');
    // Running: its first node heartbeat is written (the storm is about a node in its loop).
    await waitUntil('node-1 running', () => existsSync(join(c.store, 'nodes', 'node-1.json')), 10_000);
    const store = c.taskStore();
    const waiting = storeDir(c.store, 'waiting');
    const away = storeDir(c.store, 'waiting.away');
    const passFailed = (line: { msg: string; [key: string]: unknown }): boolean => line.msg === 'distributor pass failed' && /ENOENT/.test(String(line.err));
    // The pauses vary where in a pass the folder vanishes; they wait for nothing in particular.
    for (let round = 0; round < 12; round++) {
      await c.update(round % 2 === 0 ? 'app' : 'lib', ['main', 'b1', 'b2'][round % 3], store);
      await sleep(round % 3 === 0 ? 250 : 60);
      renameSync(waiting, away);
      // The first time, the folder stays away until a pass has failed on it (later failures are
      // rate limited into one line a minute, so only the first one can be waited for).
      if (round === 0) await node.waitForLog(passFailed, 10_000);
      else await sleep(round % 2 === 0 ? 400 : 90);
      renameSync(away, waiting);
    }
    expect(node.logs().some(passFailed)).toBe(true);
    await c.waitDelivered(20_000);
    expect(node.child.exitCode).toBeNull();
    expect(existsSync(away)).toBe(false);
    for (const project of c.projects) expect(overlapsSeen(c.dest(project)), project).toBe(0);
    console.info(
      `vanishing waiting/: node messages ${JSON.stringify([
        ...new Set(
          node
            .logs()
            .filter((line) => line.level >= 40)
            .map((line) => line.msg),
        ),
      ])}`,
    );
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.stderr).toBe('');
  });
});
