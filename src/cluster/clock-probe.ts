import { lstat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../runtime/clock.js';

/**
 * Offset of the store's clock from ours (store − local, ms), measured by writing a probe file and
 * reading back the mtime the store's server gave it. Task mtimes are store time, so due times
 * computed from them must be shifted by this offset. Accuracy is the filesystem's mtime
 * granularity (1 s on sshfs) plus the round trip.
 */
export async function measureStoreClockOffset(nodesDir: string, nodeId: string, clock: Clock): Promise<number> {
  const probe = join(nodesDir, `.clock-probe.${nodeId}`);
  // Whatever stands at the name is removed first and the probe made new ('wx' never opens an
  // existing entry): a symlink planted there must not make this node write through it.
  await unlink(probe).catch(() => undefined);
  try {
    const before = clock.now();
    await writeFile(probe, String(before), { flag: 'wx' });
    const after = clock.now();
    const { mtimeMs } = await lstat(probe);
    return Math.round(mtimeMs - (before + after) / 2);
  } finally {
    // Also after a failed write (ENOSPC), which leaves the probe behind.
    await unlink(probe).catch(() => undefined);
  }
}

/** Samples the median is taken over. */
const KEEP_SAMPLES = 5;

/** Keeps the median of recent samples so one slow round trip does not move due times. */
export class ClockOffsetTracker {
  private readonly samples: number[] = [];

  add(sample: number): number {
    this.samples.push(sample);
    if (this.samples.length > KEEP_SAMPLES) this.samples.shift();
    return this.current()!;
  }

  current(): number | undefined {
    if (this.samples.length === 0) return undefined;
    const sorted = [...this.samples].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }
}
