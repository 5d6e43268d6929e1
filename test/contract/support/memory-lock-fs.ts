import { RefusedEntryError, STORE_RECORD_MAX_BYTES } from '../../../src/runtime/bounded-read.js';
import type { LockFs } from '../../../src/lock/uri-lock.js';
import type { MemoryStoreFs } from './memory-store-fs.js';

/**
 * The lock's filesystem port over the in-memory store filesystem: the fake adapter the lock
 * contract runs against next to a real directory. Records are read as `nodeLockFs` reads them
 * (only a regular file of plausible size; anything else is refused unread), and written with
 * `writeFile` (flag `wx`) and `rename`, the path `replaceRecord` takes.
 */
export function memoryLockFs(fs: MemoryStoreFs): LockFs {
  const lockFs = {
    mkdir: (path: string) => fs.mkdir(path),
    writeFile: async (path: string, data: string, options?: { flag?: string }) => {
      if (options?.flag !== 'wx') {
        fs.writeRaw(path, String(data));
        return;
      }
      const handle = await fs.open(path, 'wx');
      try {
        await handle.writeFile(String(data));
      } finally {
        await handle.close();
      }
    },
    rename: (from: string, to: string) => fs.rename(from, to),
    readFile: async (path: string) => {
      const read = await fs.readBounded(path, STORE_RECORD_MAX_BYTES);
      if (read.kind === 'refused') throw new RefusedEntryError(path, read.reason);
      return read.text;
    },
    unlink: (path: string) => fs.unlink(path),
    rmdir: (path: string) => fs.rmdir(path),
    readdir: (path: string) => fs.readdir(path),
    lstat: (path: string) => fs.lstat(path),
  };
  // fs.promises' overloads (Buffers, Dirents, options objects) are more than the lock uses.
  return lockFs as unknown as LockFs;
}
