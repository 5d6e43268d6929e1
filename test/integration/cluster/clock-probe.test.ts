import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { measureStoreClockOffset } from '../../../src/cluster/clock-probe.js';
import { FakeClock } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const PROBE = '.clock-probe.node-1';

/**
 * Measures with a local clock fixed at `localAt`: the offset is then the probe's mtime (real time,
 * given by the filesystem) minus `localAt`, so it must fall between the real times around the call.
 * The slack absorbs a coarse filesystem timestamp.
 */
async function expectMeasured(nodes: string): Promise<void> {
  const localAt = Date.UTC(2020, 0, 1);
  const before = Date.now();
  const offset = await measureStoreClockOffset(nodes, 'node-1', new FakeClock(localAt));
  const after = Date.now();
  expect(offset).toBeGreaterThanOrEqual(before - localAt - 1000);
  expect(offset).toBeLessThanOrEqual(after - localAt + 1000);
}

describe('store clock probe', () => {
  it('measures and leaves nothing behind', async () => {
    const nodes = tempDir('refrelay-nodes');
    await expectMeasured(nodes);
    expect(readdirSync(nodes)).toEqual([]);
  });

  it('removes an empty folder left at its name, and measures', async () => {
    const nodes = tempDir('refrelay-nodes');
    mkdirSync(join(nodes, PROBE));
    await expectMeasured(nodes);
    expect(readdirSync(nodes)).toEqual([]);
  });

  it('measures under a name of its own when a folder with something in it stands at its name, and leaves that folder alone', async () => {
    const nodes = tempDir('refrelay-nodes');
    mkdirSync(join(nodes, PROBE));
    writeFileSync(join(nodes, PROBE, 'kept'), 'x');
    await expectMeasured(nodes);
    await expectMeasured(nodes);
    expect(readdirSync(nodes)).toEqual([PROBE]);
    expect(readdirSync(join(nodes, PROBE))).toEqual(['kept']);
  });

  it('removes a symlink at its name without writing through it', async () => {
    const nodes = tempDir('refrelay-nodes');
    const victim = join(tempDir('refrelay-victim'), 'file');
    writeFileSync(victim, 'untouched');
    symlinkSync(victim, join(nodes, PROBE));
    await expectMeasured(nodes);
    expect(readdirSync(nodes)).toEqual([]);
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
  });
});
