import type { StoreFileHandle, StoreFs } from '../../../src/store/store-fs.js';
import { fsError } from './memory-store-fs.js';

export { fsError };

/** `base` with some calls replaced, to inject the faults a shared filesystem produces. */
export function faultyFs(base: StoreFs, overrides: Partial<StoreFs>): StoreFs {
  return {
    open: overrides.open ?? ((path, flags) => base.open(path, flags)),
    link: overrides.link ?? ((from, to) => base.link(from, to)),
    unlink: overrides.unlink ?? ((path) => base.unlink(path)),
    rename: overrides.rename ?? ((from, to) => base.rename(from, to)),
    readdir: overrides.readdir ?? ((path) => base.readdir(path)),
    readBounded: overrides.readBounded ?? ((path, maxBytes) => base.readBounded(path, maxBytes)),
    lstat: overrides.lstat ?? ((path) => base.lstat(path)),
    mkdir: overrides.mkdir ?? ((path, options) => base.mkdir(path, options)),
    rmdir: overrides.rmdir ?? ((path) => base.rmdir(path)),
  };
}

/** Opens for real, then fails the chosen step: the partial file exists, as after a real ENOSPC. */
export function failingHandleFs(base: StoreFs, step: keyof StoreFileHandle, code: string): StoreFs {
  return faultyFs(base, {
    open: async (path, flags) => {
      const handle = await base.open(path, flags);
      if (flags !== 'wx') return handle;
      return {
        writeFile:
          step === 'writeFile'
            ? async () => {
                throw fsError(code, 'write', path);
              }
            : (data) => handle.writeFile(data),
        sync:
          step === 'sync'
            ? async () => {
                throw fsError(code, 'fsync', path);
              }
            : () => handle.sync(),
        utimes: (atime, mtime) => handle.utimes(atime, mtime),
        close:
          step === 'close'
            ? async () => {
                await handle.close();
                throw fsError(code, 'close', path);
              }
            : () => handle.close(),
      };
    },
  });
}
