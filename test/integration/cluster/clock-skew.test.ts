import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { overlapsSeen } from '../../support/destination.js';
import { projectsCoveringNodes } from '../../support/preferred-projects.js';
import { readJson } from '../../support/refrelay-node.js';
import { sleep } from '../../support/store-files.js';
import { useCluster } from './cluster-fixture.js';

const { cluster } = useCluster();

const SKEWS: Record<string, number> = { 'node-1': -600_000, 'node-2': 0, 'node-3': 600_000 };
const STREAM_MS = 25_000;

interface StatusNode {
  nodeId: string;
  state: string;
  lastBeatAgeMs: number;
  clockOffsetMs: number | null;
  clockWarning: boolean;
}

describe('nodes whose clocks disagree by ±10 minutes', () => {
  it('share a stream of updates with no takeover and no overlapping push, every node pushes, each publishes its offset from the store clock, and status flags the skewed ones', async () => {
    // Each node is the preferred node of at least one URI, so each has work offered to it first.
    const c = cluster({ label: 'refrelay-clock-skew', projects: (uriOf) => projectsCoveringNodes(Object.keys(SKEWS), uriOf, 4), lockStale: '2s' });
    const projects = c.projects;
    for (const project of projects) c.setPushSleep(0.3, project);
    const nodes = Object.entries(SKEWS).map(([id, skew]) => c.start(id, { REFRELAY_TEST_CLOCK_OFFSET_MS: String(skew) }));

    const store = c.taskStore();
    const branches = ['main', 'b1', 'b2'];
    const started = Date.now();
    let sent = 0;
    let statusJson: { nodes: StatusNode[]; storeClockOffsetMs: number | null } | undefined;
    let statusTable = '';
    while (Date.now() - started < STREAM_MS) {
      const project = projects[sent % projects.length]!;
      await c.update(project, branches[Math.floor(sent / projects.length) % branches.length], store);
      sent++;
      if (statusJson === undefined && Date.now() - started > STREAM_MS / 2) {
        // Mid-stream, from a machine with a correct clock: every node alive, the skewed ones flagged.
        const json = runCli(['status', '--config', c.config, '--json']);
        expect(json.status, json.stderr).toBe(0);
        statusJson = JSON.parse(json.stdout) as typeof statusJson;
        const table = runCli(['status', '--config', c.config]);
        expect(table.status, table.stderr).toBe(0);
        statusTable = table.stdout;
      }
      await sleep(200);
    }
    await c.waitDelivered(30_000);
    console.info(
      `clock skew: ${sent} updates over ${Date.now() - started} ms; pushes per node ${nodes.map((node) => `${node.nodeId}=${node.logs().filter((line) => line.msg === 'pushed').length}`).join(' ')}`,
    );

    for (const node of nodes) {
      expect(
        node.logs().filter((line) => line.msg === 'took over a stale URI lock'),
        node.nodeId,
      ).toEqual([]);
      expect(
        node.logs().filter((line) => line.msg === 'lost the URI lock while holding it; aborting the push'),
        node.nodeId,
      ).toEqual([]);
      // The node 10 minutes behind would never find anything due if it ignored its offset, and
      // the node ahead would see every other node as dead; each is offered its own URIs first.
      expect(node.logs().filter((line) => line.msg === 'pushed').length, node.nodeId).toBeGreaterThan(0);
      expect(node.problems()).toEqual([]);
      const record = readJson<{ clockOffsetMs: number }>(join(c.store, 'nodes', `${node.nodeId}.json`));
      expect(Math.abs(record.clockOffsetMs - -SKEWS[node.nodeId]!), `${node.nodeId} offset ${record.clockOffsetMs}`).toBeLessThanOrEqual(2000);
    }
    for (const project of projects) {
      expect(overlapsSeen(c.dest(project)), project).toBe(0);
      expect(c.delivered(project), project).toBe(true);
    }

    expect(statusJson).toBeDefined();
    expect(statusJson!.storeClockOffsetMs).toEqual(expect.any(Number));
    expect(Math.abs(statusJson!.storeClockOffsetMs!)).toBeLessThan(2000);
    expect(statusJson!.nodes.map((node) => node.nodeId)).toEqual(['node-1', 'node-2', 'node-3']);
    for (const node of statusJson!.nodes) {
      expect(node.state, node.nodeId).toBe('alive');
      expect(node.lastBeatAgeMs).toBeLessThan(3 * 200 + 2000);
      expect(Math.abs(node.clockOffsetMs! - -SKEWS[node.nodeId]!)).toBeLessThanOrEqual(2000);
      expect(node.clockWarning, node.nodeId).toBe(SKEWS[node.nodeId] !== 0);
    }
    const rows = statusTable.split('\n');
    expect(rows.find((row) => row.startsWith('node-1 '))).toMatch(/ alive .* ! clock off by \+(9m5\d|10m0\d)s$/);
    expect(rows.find((row) => row.startsWith('node-2 '))).toMatch(/ alive .* [+-]\d\.\ds$/);
    expect(rows.find((row) => row.startsWith('node-3 '))).toMatch(/ alive .* ! clock off by -(9m5\d|10m0\d)s$/);
  });
});
