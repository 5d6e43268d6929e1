import { describe, expect, it } from 'vitest';
import { simulateCluster, type ClusterSimOptions } from './cluster-simulation.js';

/**
 * Twenty nodes on one store, a bulk backlog and live updates arriving (cluster-simulation.ts),
 * measured while every node still has backlog URIs it is preferred for. The suite runs 5,000 URIs
 * with 2 tasks each and 10 updates/s, for 16 s measured after 8; REFRELAY_SIM_URIS,
 * REFRELAY_SIM_TASKS and REFRELAY_SIM_RATE run other sizes, REFRELAY_SIM_SECONDS and
 * REFRELAY_SIM_WARMUP_SECONDS other windows (BENCHMARKS.md has the figures of larger runs).
 */
const sizing = {
  uris: Number(process.env.REFRELAY_SIM_URIS ?? 5000),
  tasksPerUri: Number(process.env.REFRELAY_SIM_TASKS ?? 2),
  arrivalsPerSecond: Number(process.env.REFRELAY_SIM_RATE ?? 10),
  durationMs: 1000 * Number(process.env.REFRELAY_SIM_SECONDS ?? 16),
  warmupMs: 1000 * Number(process.env.REFRELAY_SIM_WARMUP_SECONDS ?? 8),
};
/** Other sizes take minutes to hours per simulation (BENCHMARKS.md). */
const timeoutMs = process.env.REFRELAY_SIM_URIS === undefined ? 300_000 : 14_400_000;
const run = (extra: Partial<ClusterSimOptions> = {}) => simulateCluster({ nodes: 20, ...sizing, seed: 7, ...extra });

describe('twenty nodes on one store', () => {
  it(
    'keeps store operations to the URIs that change, lock collisions under 5 % of claims and enqueue → push within its bound, and shares the pushes',
    async () => {
      const result = await run();
      const without = await run({ preferredNode: false });
      console.log(`cluster simulation: ${JSON.stringify({ preferredNode: result, everyNodeAtOnce: without })}`);

      expect(result.nodeOpsPerSecond).toBeLessThanOrEqual(20 * result.changedUrisPerSecond + 20 * 100);
      expect(result.collisionsPerClaim).toBeLessThanOrEqual(0.05);
      // Offering each URI to its preferred node first is what keeps the collisions down.
      expect(without.collisionsPerClaim).toBeGreaterThan(2 * result.collisionsPerClaim);
      expect(result.p99Ms).toBeLessThanOrEqual(result.batchingBoundMs + 2000);
      expect(result.unpushed).toBe(0);
      for (const share of result.pushShares) expect(Math.abs(share - 5)).toBeLessThanOrEqual(2);
    },
    timeoutMs,
  );
});
