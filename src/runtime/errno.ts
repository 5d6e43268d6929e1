import { constants } from 'node:os';

const ESTALE_ERRNO = -constants.errno.ESTALE;

/**
 * The errno name of a failed system call. libuv has no name for ESTALE, so Node reports a stale
 * NFS (or FUSE) file handle as code "Unknown system error -116" with errno -116: a plain
 * `code === 'ESTALE'` test never matches, and a vanished entry becomes an unexpected error.
 */
export function errnoName(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  if (errno === ESTALE_ERRNO) return 'ESTALE';
  return typeof code === 'string' ? code : undefined;
}

/** The entry is not there (any more): on NFS a vanished file can also show up as ESTALE. */
export function isGone(error: unknown): boolean {
  const code = errnoName(error);
  return code === 'ENOENT' || code === 'ESTALE';
}

/**
 * The path no longer leads anywhere: the entry is gone, or a folder on the way is no longer a
 * folder (ENOTDIR). Kept apart from `isGone` on purpose: the lock, and the store's readers of
 * folders a peer may rename or replace, take ENOTDIR as one more way of "not there"; the store's
 * moves and sweeps do not, since there it means a folder of the layout is a file (a damaged
 * store), which must surface as an error instead of passing for a lost race.
 */
export function isPathGone(error: unknown): boolean {
  return isGone(error) || errnoName(error) === 'ENOTDIR';
}

/**
 * 'EACCES' or 'EPERM' when `error` (or the cause a StoreError wraps) is this process being
 * refused access, else undefined: an entry someone else's mode keeps from this user.
 */
export function refusedErrno(error: unknown): 'EACCES' | 'EPERM' | undefined {
  const code = errnoName(error instanceof Error && error.cause !== undefined ? error.cause : error);
  return code === 'EACCES' || code === 'EPERM' ? code : undefined;
}
