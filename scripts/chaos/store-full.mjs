// A store that fills up for a few seconds: the store folder is a small tmpfs of its own (the
// sshfs mounts are of that folder, so they see it fill too), and a filler file takes its last
// page, then goes. Hooks must spool (`enqueue` exits 0) and the local node forward the spool.
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** The store holds task files, records and (sparse) hostile entries: a few MiB; the rest is headroom. */
export const STORE_TMPFS_SIZE = '64m';

/** Mounts a tmpfs at `dir` (registered for cleanup), or says why this machine refuses one. */
export function mountStoreTmpfs(processes, dir) {
  mkdirSync(dir, { recursive: true });
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${STORE_TMPFS_SIZE},mode=0755`, 'tmpfs', dir], { encoding: 'utf8' });
  if (result.status !== 0) return { refused: `mount -t tmpfs refused (${result.error?.message ?? result.stderr.trim()})` };
  processes.mounts.push(dir);
  return { mounted: dir };
}

export class StoreFiller {
  constructor(store) {
    this.filler = join(store, '.chaos-filler');
    this.episodes = [];
  }

  /** Writes the filler until the filesystem has no page left; true when it got there. */
  fill() {
    const fd = openSync(this.filler, 'w');
    const chunk = Buffer.alloc(64 * 1024, 1);
    const small = Buffer.alloc(512, 1);
    try {
      for (;;) writeSync(fd, chunk);
    } catch (error) {
      if (error.code !== 'ENOSPC') throw error;
    }
    // The last pages, so even a small record cannot be written.
    try {
      for (;;) writeSync(fd, small);
    } catch (error) {
      if (error.code !== 'ENOSPC') throw error;
    } finally {
      closeSync(fd);
    }
    this.episodes.push({ from: Date.now(), to: undefined });
    return true;
  }

  empty() {
    rmSync(this.filler, { force: true });
    const episode = this.episodes.at(-1);
    if (episode !== undefined && episode.to === undefined) episode.to = Date.now();
  }

  get seconds() {
    return this.episodes.reduce((sum, { from, to }) => sum + ((to ?? Date.now()) - from) / 1000, 0);
  }

  /** True when `at` (epoch ms) lies in an episode or within `afterMs` of its end. */
  during(at, afterMs) {
    return this.episodes.some(({ from, to }) => at >= from && at <= (to ?? Date.now()) + afterMs);
  }
}
