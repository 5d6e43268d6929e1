import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { overlapsSeen } from '../../support/destination.js';
import { commitFile, git } from '../../support/git.js';
import { storeDir } from '../../support/refrelay-node.js';
import { namesIn, sleep, taskFilesIn, waitUntil } from '../../support/store-files.js';
import { useCluster } from './cluster-fixture.js';

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

/** Writes `path` until the filesystem has no page left. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // Full to the last page: even a one-byte file cannot be written.
  const probe = join(path, '..', 'probe');
  expect(spawnSync('sh', ['-c', `printf x > '${probe}'`]).status).not.toBe(0);
  rmSync(probe, { force: true });
}

function errorsOf(node: { logs(): Array<{ level: number; msg: string }> }): string[] {
  return [...new Set(node.logs().filter((line) => line.level >= 50).map((line) => line.msg))].sort();
}

describe('a store that fails under a running node', () => {
  it('a full disk: enqueue exits 1 naming the store and ENOSPC with nothing half-written, the daemon keeps running, and once space is freed it delivers what was queued', async (ctx) => {
    const mount = mountSmallTmpfs();
    if ('refused' in mount) {
      console.warn(`skipped: ${mount.refused}`);
      return ctx.skip(mount.refused);
    }
    const c = cluster({ label: 'refrelay-full-disk', storePath: join(mount.mountPoint, 'store') });
    await c.update('app', 'main');
    const queued = taskFilesIn(storeDir(c.store, 'waiting'));
    expect(queued).toHaveLength(1);
    const filler = join(mount.mountPoint, 'filler');
    fill(filler);

    const node = c.start('node-1');
    await node.waitForLog((line) => line.msg === 'push job failed', 10_000);

    // A developer's push arrives now: its hook's enqueue must fail loudly, not half-succeed.
    const work = join(c.root, 'work', 'app');
    commitFile(work, 'during-full.txt', 'during\n');
    git(work, ['push', '-q', c.source(), 'HEAD:refs/heads/during']);
    const refused = runCli(['enqueue', '--config', c.config, '--project', 'app', '--ref', 'refs/heads/during']);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(c.store);
    expect(refused.stderr).toMatch(/^refrelay: create task failed \(ENOSPC\) at .*ENOSPC/);
    expect(taskFilesIn(storeDir(c.store, 'waiting'))).toEqual(queued);
    expect(namesIn(storeDir(c.store, 'building'))).toEqual([]);

    // Several passes on the full store: the node logs and keeps going.
    await sleep(1500);
    expect(node.child.exitCode).toBeNull();
    expect(c.delivered()).toBe(false);
    // Failed writes clean up after themselves: no ownerless lock folder (it would block the URI
    // until a stale takeover), no heartbeat temps or clock probes piling up once per beat.
    // (A lock attempt may be in flight at any instant; a leaked folder would never go away.)
    for (const deadline = Date.now() + 3000; namesIn(storeDir(c.store, 'running')).length > 0 && Date.now() < deadline; ) await sleep(20);
    expect(namesIn(storeDir(c.store, 'running'))).toEqual([]);
    expect(namesIn(join(c.store, 'nodes')).filter((name) => name.startsWith('.'))).toEqual([]);
    expect(taskFilesIn(storeDir(c.store, 'waiting'))).toEqual(queued);

    rmSync(filler);
    const freedAt = Date.now();
    // The refused update is queued again (a hook would be re-run by the next push, or `verify --fix`).
    const again = runCli(['enqueue', '--config', c.config, '--project', 'app', '--ref', 'refs/heads/during']);
    expect(again.status, again.stderr).toBe(0);
    await c.waitDelivered();
    console.info(`full disk: delivered ${Date.now() - freedAt} ms after space was freed`);
    expect(node.child.exitCode).toBeNull();
    expect(overlapsSeen(c.dest())).toBe(0);
    expect(errorsOf(node)).toEqual(['push job failed']);
    // Nothing left behind by the failed writes: no temps, no ownerless lock folder.
    expect(namesIn(storeDir(c.store, 'building'))).toEqual([]);
    // (A lock attempt may be in flight at any instant; a leaked folder would never go away.)
    for (const deadline = Date.now() + 3000; namesIn(storeDir(c.store, 'running')).length > 0 && Date.now() < deadline; ) await sleep(20);
    expect(namesIn(storeDir(c.store, 'running'))).toEqual([]);
    expect(namesIn(join(c.store, 'nodes'))).toEqual(['node-1.json']);
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
  });

  it('waiting/ renamed away and back mid-run, again and again: the node logs failed passes, never stops, and delivers everything afterwards', async () => {
    const c = cluster({ label: 'refrelay-vanishing-folder', projects: ['app', 'lib'] });
    c.setPushSleep(0.2, 'app');
    c.setPushSleep(0.2, 'lib');
    const node = c.start('node-1');
    const store = c.taskStore();
    const waiting = storeDir(c.store, 'waiting');
    const away = storeDir(c.store, 'waiting.away');
    for (let round = 0; round < 12; round++) {
      await c.update(round % 2 === 0 ? 'app' : 'lib', ['main', 'b1', 'b2'][round % 3], store);
      await sleep(round % 3 === 0 ? 250 : 60);
      renameSync(waiting, away);
      await sleep(round % 2 === 0 ? 400 : 90);
      renameSync(away, waiting);
    }
    expect(node.logs().some((line) => line.msg === 'distributor pass failed' && /ENOENT/.test(String(line.err)))).toBe(true);
    await c.waitDelivered(20_000);
    expect(node.child.exitCode).toBeNull();
    expect(existsSync(away)).toBe(false);
    for (const project of c.projects) expect(overlapsSeen(c.dest(project)), project).toBe(0);
    console.info(`vanishing waiting/: node messages ${JSON.stringify([...new Set(node.logs().filter((line) => line.level >= 40).map((line) => line.msg))])}`);
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.stderr).toBe('');
  });
});
