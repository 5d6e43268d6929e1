import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, lstat, mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { entryType, readBounded } from '../runtime/bounded-read.js';
import { errnoName } from '../runtime/errno.js';
import type { RefSnapshot } from './ref-snapshot.js';

/** In this store's folder of the local spool (`spoolDirFor`): the watcher's state on this machine. */
export const REF_SNAPSHOTS_DIR = 'ref-snapshots';
const HEADER = 'refrelay ref snapshot 1';
/** The last line: a file cut short (a crash, a full disk) has none and is not trusted. */
const TRAILER = 'end';
const REF_LINE = /^([0-9a-f]{40}|[0-9a-f]{64}) (\S+)$/;
/** Room for a repository of a few million refs (Gerrit's `refs/changes/`: ~70 bytes a ref). */
const SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024;

/** What a start finds for a repository: the refs queued last time, none (never watched here), or a file it cannot trust. */
export type SavedSnapshot =
  { readonly kind: 'saved'; readonly refs: RefSnapshot } | { readonly kind: 'none' } | { readonly kind: 'unreadable'; readonly reason: string };

/**
 * The ref watcher's snapshots on this machine's disk (DESIGN.md "The flow", 1), one file per
 * repository named by the sha1 of its resolved path: the refs as they were when their changes were
 * last durable in the store. A daemon that starts compares each repository with its file, so a
 * change made while no daemon watched is queued too. A file is only ever replaced by a newer
 * snapshot whose changes the store took, so it is never ahead of the store: at worst a change is
 * queued twice.
 */
export class SavedRefSnapshots {
  constructor(private readonly dir: string) {}

  /**
   * Makes the folder when missing. Whether it held snapshots already (a start after an earlier
   * one), or why it cannot be used: a link there (never followed), a file, or a folder this user
   * may not read and write. Called once, before any load or save.
   */
  async open(): Promise<{ readonly earlier: boolean } | { readonly unusable: string }> {
    try {
      const stats = await lstat(this.dir).catch(async (error: unknown) => {
        if (errnoName(error) !== 'ENOENT') throw error;
        await mkdir(this.dir, { recursive: true });
        return lstat(this.dir);
      });
      if (!stats.isDirectory()) return { unusable: `${this.dir} is ${entryType(stats)}, not a folder` };
      await access(this.dir, constants.R_OK | constants.W_OK | constants.X_OK);
      return { earlier: (await readdir(this.dir)).some((name) => name.endsWith('.refs')) };
    } catch (error) {
      return { unusable: `${this.dir} cannot be made, read or written: ${errnoName(error) ?? String(error)}` };
    }
  }

  async load(repository: string): Promise<SavedSnapshot> {
    let read;
    try {
      read = await readBounded(this.pathOf(repository), SNAPSHOT_MAX_BYTES);
    } catch (error) {
      const code = errnoName(error) ?? 'an unknown error';
      return code === 'ENOENT' ? { kind: 'none' } : { kind: 'unreadable', reason: `could not be read: ${code}` };
    }
    if (read.kind === 'refused') return { kind: 'unreadable', reason: read.reason };
    const lines = read.text.split('\n');
    if (lines[0] !== HEADER || lines.at(-2) !== TRAILER || lines.at(-1) !== '') return { kind: 'unreadable', reason: 'cut short or not a ref snapshot' };
    const refs: RefSnapshot = new Map();
    for (const line of lines.slice(1, -2)) {
      const match = REF_LINE.exec(line);
      if (match === null) return { kind: 'unreadable', reason: 'a line that is no ref' };
      refs.set(match[2]!, match[1]!);
    }
    return { kind: 'saved', refs };
  }

  /**
   * Temp, fsync, rename: a crash leaves the previous snapshot or this one, each one the store took.
   * The folder is `lstat`ed first each time: one made a link since the start is refused.
   */
  async save(repository: string, refs: RefSnapshot): Promise<void> {
    const folder = await lstat(this.dir);
    if (!folder.isDirectory()) throw new Error(`${this.dir} is ${entryType(folder)}, not a folder`);
    const path = this.pathOf(repository);
    const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const lines = [HEADER, ...[...refs].map(([ref, oid]) => `${oid} ${ref}`), TRAILER, ''];
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(lines.join('\n'));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path).catch(async (error: unknown) => {
      await unlink(temp).catch(() => undefined);
      throw error;
    });
  }

  private pathOf(repository: string): string {
    return join(this.dir, `${createHash('sha1').update(resolve(repository)).digest('hex')}.refs`);
  }
}
