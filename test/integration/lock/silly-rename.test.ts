import * as fsp from 'node:fs/promises';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UriLocks, type LockFs } from '../../../src/lock/uri-lock.js';
import { errnoName } from '../../../src/runtime/errno.js';
import { TaskStore, nodeStoreFs } from '../../../src/store/task-store.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const LOCK = 'a'.repeat(40);
const URI = 'git://example.com/app.git';

/** The error Node really raises for a stale NFS/FUSE handle: libuv has no name for errno 116. */
function realEstale(syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`Unknown system error -116: Unknown system error -116, ${syscall} '${path}'`), {
    errno: -116,
    code: 'Unknown system error -116',
    syscall,
    path,
  });
}

/**
 * The local filesystem as a FUSE (sshfs) or NFS client shows it while another process on the
 * same client holds some files open: unlinking or replacing such a file only renames it to a
 * hidden name in its folder, which the client removes when the reader closes it.
 */
function clientWithOpenReaders(): { fs: LockFs; holdOpen(path: string): void } {
  const open = new Set<string>();
  let hidden = 0;
  const hide = async (path: string): Promise<void> => {
    await fsp.rename(path, join(dirname(path), `.fuse_hidden${String(++hidden).padStart(16, '0')}`));
    open.delete(path);
  };
  const fs = {
    ...fsp,
    unlink: async (path: string) => (open.has(path) ? hide(path) : fsp.unlink(path)),
    rename: async (from: string, to: string) => {
      if (open.has(to)) await hide(to);
      return fsp.rename(from, to);
    },
  } as LockFs;
  return { fs, holdOpen: (path) => open.add(path) };
}

function locks(runningDir: string, nodeId: string, fs?: LockFs): UriLocks {
  return new UriLocks({ runningDir, nodeId, host: 'h', pid: 1, clock: new FakeClock(), random: new SeededRandom(nodeId.length), ...(fs ? { fs } : {}) });
}

describe('lock folders on a client where a reader holds the owner record open (NFS .nfs*, FUSE .fuse_hidden*)', () => {
  it('releasing frees the URI at once: the lease folder with the silly-renamed record goes aside as a tombstone, and the sweep removes it', async () => {
    const root = tempDir('refrelay-silly');
    const store = new TaskStore({ root, nodeId: 'sweeper' });
    await store.listWaiting(); // creates the layout
    const runningDir = join(root, 'ref-updates', 'running');
    const client = clientWithOpenReaders();
    const held = await locks(runningDir, 'node-a', client.fs).acquire(LOCK, URI);
    expect(held).toBeDefined();
    // This node's own observer (or `refrelay status`) is reading the record right now.
    client.holdOpen(join(runningDir, LOCK, held!.leaseId, 'owner.json'));

    expect(await held!.release()).toBe(true);

    const next = await locks(runningDir, 'node-b').acquire(LOCK, URI);
    expect(next, 'the URI is free for the next push, not locked until a takeover').toBeDefined();
    const tombstones = readdirSync(runningDir).filter((name) => name.includes('.tomb.'));
    expect(tombstones).toHaveLength(1);
    expect(await store.recoverLockFolder(tombstones[0]!)).toEqual({ recovered: 0, removed: true });
    expect(readdirSync(runningDir)).toEqual([LOCK]);
  });

  it('sweeping a tombstone removes silly-renamed records a takeover orphaned (sshfs never removes them once the folder was renamed elsewhere)', async () => {
    const root = tempDir('refrelay-silly');
    const store = new TaskStore({ root, nodeId: 'sweeper' });
    await store.listWaiting();
    const tombstone = `${LOCK}.tomb.node-b.t000001`;
    const lease = join(root, 'ref-updates', 'running', tombstone, 'node-a.t000000');
    mkdirSync(lease, { recursive: true });
    writeFileSync(join(lease, '.fuse_hidden0000000a0100000005'), '{"leaseId":"node-a.t000000"}\n');
    writeFileSync(join(dirname(lease), '.nfs000000000123abcd00000001'), '{}\n');

    expect(await store.recoverLockFolder(tombstone)).toEqual({ recovered: 0, removed: true });
    expect(readdirSync(join(root, 'ref-updates', 'running'))).toEqual([]);
  });

  it('a stale file handle (errno 116, which Node names "Unknown system error -116") is a vanished entry, not a failure', async () => {
    const error = realEstale('open', '/store/x');
    expect(errnoName(error)).toBe('ESTALE');

    const root = tempDir('refrelay-estale');
    const runningDir = join(root, 'running');
    mkdirSync(runningDir); // part of the store's layout
    const acquired = await locks(runningDir, 'node-a').acquire(LOCK, URI);
    expect(acquired).toBeDefined();
    const staleReads = { ...fsp, readFile: async (path: string) => Promise.reject(realEstale('open', String(path))) } as LockFs;
    await expect(locks(runningDir, 'node-b', staleReads).readOwner(LOCK)).resolves.toBeUndefined();

    const store = new TaskStore({ root, nodeId: 'hook' });
    await store.create({ project: 'app', refs: ['refs/heads/main'], uri: URI, remote: 'mirror' });
    const reader = new TaskStore({
      root,
      nodeId: 'reader',
      fs: {
        ...nodeStoreFs,
        readBounded: async (path, max) => (path.includes('/waiting/') ? Promise.reject(realEstale('open', path)) : nodeStoreFs.readBounded(path, max)),
      },
    });
    await expect(reader.listWaiting(), 'the file was replaced under the listing: skipped, the pass goes on').resolves.toMatchObject({ folders: [], loose: [] });
    expect(readdirSync(join(root, 'ref-updates', 'corrupt'))).toEqual([]);
  });

  it('a lock folder or owner record this node may not read (EACCES, EPERM) counts as ownerless, not as a failed scan', async () => {
    const root = tempDir('refrelay-eacces');
    const runningDir = join(root, 'running');
    mkdirSync(runningDir);
    expect(await locks(runningDir, 'node-a').acquire(LOCK, URI)).toBeDefined();
    const denied = (code: string) => Object.assign(new Error(`${code}: permission denied`), { code });
    const noList = { ...fsp, readdir: async () => Promise.reject(denied('EACCES')) } as unknown as LockFs;
    const noRead = { ...fsp, readFile: async () => Promise.reject(denied('EPERM')) } as unknown as LockFs;
    await expect(locks(runningDir, 'node-b', noList).readOwner(LOCK)).resolves.toBeUndefined();
    await expect(locks(runningDir, 'node-b', noRead).readOwner(LOCK)).resolves.toBeUndefined();
    expect((await locks(runningDir, 'node-b').readOwner(LOCK))?.nodeId).toBe('node-a');
  });
});
