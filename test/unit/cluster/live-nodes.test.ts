import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LiveNodes } from '../../../src/cluster/live-nodes.js';
import { FakeClock } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('live nodes from nodes/', () => {
  it('counts the records replaced within the window, never a stale one, a symlink or a name that is no node id, and keeps the same object while nothing changes', async () => {
    const dir = join(tempDir('refrelay-nodes'), 'nodes');
    mkdirSync(dir);
    const clock = new FakeClock(Date.now());
    const record = (name: string, ageMs: number): void => {
      writeFileSync(join(dir, name), '{}');
      const at = new Date(clock.now() - ageMs);
      utimesSync(join(dir, name), at, at);
    };
    record('b.json', 1_000);
    record('c.json', 120_000);
    record('.b.x.tmp', 0);
    record('not a node.json', 0);
    symlinkSync(join(dir, 'b.json'), join(dir, 'd.json'));
    const nodes = new LiveNodes({ nodesDir: dir, nodeId: 'a', clock, storeClockOffsetMs: () => 0, aliveWithinMs: () => 60_000 });
    expect(nodes.membership).toEqual({ self: 'a', live: ['a'] });

    await nodes.refresh();
    const first = nodes.membership;
    await nodes.refresh();

    expect(first).toEqual({ self: 'a', live: ['a', 'b'] });
    expect(nodes.membership).toBe(first);
    clock.advance(60_000);
    await nodes.refresh();
    expect(nodes.membership).toEqual({ self: 'a', live: ['a'] });
  });

  it('gives the same list on nodes whose clocks are 10 minutes apart, each reading record times through its offset from the store clock', async () => {
    const dir = join(tempDir('refrelay-nodes-skew'), 'nodes');
    mkdirSync(dir);
    const storeNow = Date.now();
    for (const [name, ageMs] of [
      ['a', 500],
      ['b', 1_000],
      ['c', 200],
      ['old', 120_000],
    ] as const) {
      writeFileSync(join(dir, `${name}.json`), '{}');
      const at = new Date(storeNow - ageMs);
      utimesSync(join(dir, `${name}.json`), at, at);
    }
    const seenBy = async (nodeId: string, skewMs: number): Promise<readonly string[]> => {
      const nodes = new LiveNodes({
        nodesDir: dir,
        nodeId,
        clock: new FakeClock(storeNow + skewMs),
        storeClockOffsetMs: () => -skewMs,
        aliveWithinMs: () => 60_000,
      });
      await nodes.refresh();
      return nodes.membership.live;
    };

    expect(await seenBy('a', -600_000)).toEqual(['a', 'b', 'c']);
    expect(await seenBy('b', 0)).toEqual(['a', 'b', 'c']);
    expect(await seenBy('c', 600_000)).toEqual(['a', 'b', 'c']);
  });
});
