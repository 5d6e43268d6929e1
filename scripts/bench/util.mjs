import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export async function withTempDir(label, fn, parent = tmpdir()) {
  const dir = mkdtempSync(join(parent, `refrelay-bench-${label}-`));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const fmt = (ms) => `${ms.toFixed(1)} ms`;

/**
 * Where benchmarks put their destination repositories: a filesystem of their own (tmpfs where
 * there is one), as they stand for other hosts. On the store's ext4 filesystem the store's
 * thousands of just-unlinked task files would slow the destinations' inode allocation.
 */
export const destinationsParent = existsSync('/dev/shm') ? '/dev/shm' : undefined;
