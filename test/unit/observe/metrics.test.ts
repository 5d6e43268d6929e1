import { describe, expect, it } from 'vitest';
import { mergeTrends } from '../../../src/observe/trend.js';
import type { ClusterStatus } from '../../../src/observe/cluster-status.js';
import { NodeMetrics } from '../../../src/observe/metrics.js';

const pushed = (result: 'ok' | 'partial' | 'failed', outcomes: Record<string, number>) => ({
  type: 'pushed' as const,
  pushId: 'n.1',
  remote: 'dr',
  uri: 'u',
  uriKey: 'k',
  project: 'p',
  refs: ['refs/heads/a', 'refs/heads/b'],
  refResults: [],
  outcomes,
  durationMs: 400,
  result,
  oldestQueuedAtMs: 7_000,
});

function status(partial: Partial<ClusterStatus>): ClusterStatus {
  return {
    version: 1,
    generatedAt: new Date(0).toISOString(),
    storePath: '/s',
    totals: { waiting: 0, running: 0, failed: 0, corrupt: 0 },
    trend: mergeTrends([], 0),
    remotes: [],
    running: [],
    failed: [],
    storeClockOffsetMs: 0,
    nodes: [],
    circuits: [],
    backingOff: { uris: [], unread: 0 },
    verify: null,
    history: {},
    queueFrom: null,
    ...partial,
  };
}

describe('NodeMetrics', () => {
  it('counts pushes, refs and retries by remote, and times delay and lag from the first enqueue', async () => {
    const metrics = new NodeMetrics(() => 10_000);
    metrics.record(pushed('ok', { new: 1, updated: 1 }));
    metrics.record(pushed('failed', {}));
    metrics.record({ type: 'retry-scheduled', remote: 'dr', uri: 'u', uriKey: 'k', attempts: 1, retryInMs: 1000, reason: 'x' });
    metrics.record({ type: 'takeover', uriKey: 'k', formerNode: 'b', tasks: 1 });
    const text = await metrics.text();
    expect(text).toContain('refrelay_pushes_total{remote="dr",result="ok"} 1\n');
    expect(text).toContain('refrelay_pushes_total{remote="dr",result="failed"} 1\n');
    expect(text).toContain('refrelay_refs_total{remote="dr",status="new"} 1\n');
    expect(text).toContain('refrelay_retries_total{remote="dr"} 1\n');
    expect(text).toContain('refrelay_lock_takeovers_total 1\n');
    // Counters without labels are present from the first scrape, so rate() and alerts work before the first event.
    expect(text).toContain('refrelay_quarantined_total 0\n');
    expect(text).toContain('refrelay_webhook_events_dropped_total 0\n');
    // queued at 7 s, pushed at 10 s after 0.4 s: delay 2.6 s (both pushes), lag 3 s (the delivered one only)
    expect(text).toContain('refrelay_replication_delay_seconds_sum{remote="dr"} 5.2\n');
    expect(text).toContain('refrelay_replication_lag_seconds_sum{remote="dr"} 3\n');
    expect(text).toContain('refrelay_replication_lag_seconds_count{remote="dr"} 1\n');
  });

  it('sets the cluster-wide gauges from a store snapshot, replacing the previous one', async () => {
    const metrics = new NodeMetrics(() => 0);
    const node = (nodeId: string, state: 'alive' | 'stale' | 'stopped', clockOffsetMs: number | null) => ({
      nodeId,
      state,
      lastBeatAgeMs: 0,
      clockOffsetMs,
      clockWarning: false,
      spooledTasks: 0,
      record: {},
    });
    metrics.updateCluster(
      status({
        totals: { waiting: 3, running: 1, failed: 2, corrupt: 1 },
        remotes: [{ name: 'dr', configured: true, waiting: 3, running: 1, failed: 2, oldestWaitingAgeMs: 90_000, uris: [] }],
        nodes: [node('a', 'alive', 250), node('b', 'stale', -1500), node('c', 'stopped', 10)],
        circuits: [
          { nodeId: 'a', host: 'ssh://dead.example.com', state: 'open', trips: 2, nextProbeInMs: 30_000, lastError: 'Connection refused' },
          { nodeId: 'b', host: 'ssh://dead.example.com', state: 'half-open', trips: 1, nextProbeInMs: null, lastError: null },
        ],
        verify: {
          nodeId: 'a',
          finishedAgeMs: 0,
          destinations: 4,
          drifted: 1,
          unreachable: 0,
          byRemote: { dr: { destinations: 4, drifted: 1, unreachable: 0 } },
          problems: [],
        },
      }),
    );
    let text = await metrics.text();
    expect(text).toContain('refrelay_tasks{state="waiting",remote="dr"} 3\n');
    expect(text).toContain('refrelay_tasks{state="corrupt",remote=""} 1\n');
    expect(text).toContain('refrelay_oldest_waiting_seconds{remote="dr"} 90\n');
    expect(text).toContain('refrelay_nodes{state="alive"} 1\n');
    expect(text).toContain('refrelay_clock_offset_seconds{node="b"} -1.5\n');
    expect(text).not.toContain('refrelay_clock_offset_seconds{node="c"}');
    expect(text).toContain('refrelay_verify_drift{remote="dr"} 1\n');
    expect(text).toContain('refrelay_host_circuits_open{host="ssh://dead.example.com"} 2\n');
    metrics.updateCluster(status({}));
    text = await metrics.text();
    expect(text).not.toContain('refrelay_host_circuits_open{');
    expect(text).not.toContain('remote="dr"} 3');
    expect(text).toContain('refrelay_nodes{state="alive"} 0\n');
  });
});
