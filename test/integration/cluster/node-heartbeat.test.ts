import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeHeartbeat } from '../../../src/cluster/node-heartbeat.js';
import { systemClock } from '../../../src/runtime/clock.js';
import { systemRandom } from '../../../src/runtime/random.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('the node heartbeat record', () => {
  it('carries the count of spooled tasks while there are any, and drops the field when the spool is empty', async () => {
    const nodesDir = tempDir('refrelay-nodes');
    const heartbeat = new NodeHeartbeat({ nodesDir, nodeId: 'node-1', pid: 1, host: 'h', version: 't', clock: systemClock, random: systemRandom });
    const read = (): Record<string, unknown> => JSON.parse(readFileSync(join(nodesDir, 'node-1.json'), 'utf8')) as Record<string, unknown>;
    await heartbeat.beat([], null, false, [], undefined, 7);
    expect(read().spooled).toBe(7);
    await heartbeat.beat([], null, false, [], undefined, 0);
    expect('spooled' in read()).toBe(false);
  });
});
