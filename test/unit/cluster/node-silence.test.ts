import { describe, expect, it } from 'vitest';
import { NodeSilence, type NodeBeats } from '../../../src/cluster/node-silence.js';
import { FakeClock } from '../../support/fake-clock.js';

const SILENT_MS = 1300;

/** Looks that return whatever the test set last. */
function nodes(): { beats: Map<string, number>; look: () => Promise<NodeBeats> } {
  const beats = new Map<string, number>();
  return { beats, look: async () => new Map(beats) };
}

describe('NodeSilence: is any node working for a command that waits on the store?', () => {
  it('says so once when no record was new or replaced for silentMs of its own time, however old the records are', async () => {
    const clock = new FakeClock();
    const { beats, look } = nodes();
    beats.set('n1.json', 5); // a node that stopped long ago
    const silence = new NodeSilence(look, () => clock.monotonic(), SILENT_MS);
    expect(await silence.silentNow()).toBe(false);
    clock.advance(SILENT_MS - 1);
    expect(await silence.silentNow()).toBe(false);
    clock.advance(1);
    expect(await silence.silentNow()).toBe(true);
    clock.advance(SILENT_MS);
    expect(await silence.silentNow()).toBe(false); // said once
  });

  it('never says so while a record is replaced or a new one appears, whatever the clocks of the nodes', async () => {
    const clock = new FakeClock();
    const { beats, look } = nodes();
    const silence = new NodeSilence(look, () => clock.monotonic(), SILENT_MS);
    await silence.silentNow();
    for (let i = 1; i <= 10; i++) {
      clock.advance(SILENT_MS - 1);
      if (i === 1)
        beats.set('n2.json', -1e12); // a new node, its store clock far behind ours
      else beats.set('n2.json', -1e12 - i);
      expect(await silence.silentNow()).toBe(false);
    }
  });
});
