import { lstat, rmdir, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../runtime/clock.js';
import { errnoName } from '../runtime/errno.js';

/**
 * Offset of the store's clock from ours (store − local, ms), measured by writing a probe file and
 * reading back the mtime the store's server gave it. Task mtimes are store time, so due times
 * computed from them must be shifted by this offset. Accuracy is the filesystem's mtime
 * granularity (1 s on sshfs) plus the round trip.
 */
export async function measureStoreClockOffset(nodesDir: string, nodeId: string, clock: Clock): Promise<number> {
  const probe = join(nodesDir, `.clock-probe.${nodeId}`);
  // An entry at the name that cannot be cleared (a folder with something in it) must not fail
  // every measurement from now on: this one then probes under a name of its own.
  return probeAt((await clearName(probe)) ? probe : `${probe}.${clock.now()}`, clock);
}

/**
 * Removes whatever stands at the probe's name, so that 'wx' makes the probe new and never opens
 * an existing entry: a file or a symlink is unlinked (never followed), an empty folder left there
 * removed. Whether the name is free now.
 */
async function clearName(probe: string): Promise<boolean> {
  try {
    await unlink(probe);
    return true;
  } catch (error) {
    const code = errnoName(error);
    // EISDIR on Linux, EPERM where unlink(2) refuses folders that way.
    if (code !== 'EISDIR' && code !== 'EPERM') return true;
  }
  return rmdir(probe).then(
    () => true,
    () => false,
  );
}

async function probeAt(probe: string, clock: Clock): Promise<number> {
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
