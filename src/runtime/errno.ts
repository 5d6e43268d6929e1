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
