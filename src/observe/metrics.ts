import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ClusterStatus } from './cluster-status.js';
import type { ReplicationEvent } from '../schedule/events.js';

/** Push and delay buckets, in seconds: sub-second local pushes up to an hour-long backlog. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const DELAY_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

const TASK_STATES = ['waiting', 'running', 'failed', 'corrupt'] as const;

/** What this node's own gauges read at each scrape. */
export interface NodeGauges {
  /** Tasks enqueue spooled on this machine because the store could not be written, not forwarded yet. */
  readonly spooledTasks: () => number;
  /** False while this node's writes to the store fail (its jobs, passes or heartbeat). */
  readonly storeWritable: () => boolean;
  /** The `lockStale` setting, against which clock offsets are judged. */
  readonly lockStaleMs: () => number;
  /** URIs this node is pushing right now (its push jobs). */
  readonly runningPushes: () => number;
}

/**
 * The node's Prometheus metrics. Counters and histograms come from this node's own events; the
 * cluster-wide gauges (queue, nodes, clock offsets, verify drift) are set from a store snapshot
 * right before each scrape, so every node reports the same cluster view. Labels are remote
 * names, states, results and node ids only: never a ref, a task or a URI.
 */
export class NodeMetrics {
  readonly registry = new Registry();
  private readonly tasks: Gauge<'state' | 'remote'>;
  private readonly oldestWaiting: Gauge<'remote'>;
  private readonly pushes: Counter<'remote' | 'result'>;
  private readonly pushDuration: Histogram<'remote'>;
  private readonly replicationDelay: Histogram<'remote'>;
  private readonly replicationLag: Histogram<'remote'>;
  private readonly refs: Counter<'remote' | 'status'>;
  private readonly retries: Counter<'remote'>;
  private readonly failures: Counter<'remote' | 'kind'>;
  private readonly takeovers: Counter;
  private readonly quarantined: Counter;
  private readonly webhookDropped: Counter;
  private readonly nodes: Gauge<'state'>;
  private readonly clockOffset: Gauge<'node'>;
  private readonly verifyDrift: Gauge<'remote'>;
  private readonly openCircuits: Gauge<'host'>;
  private gauges: NodeGauges = { spooledTasks: () => 0, storeWritable: () => true, lockStaleMs: () => 0, runningPushes: () => 0 };

  constructor(private readonly storeNow: () => number) {
    const registers = [this.registry];
    this.tasks = new Gauge({
      name: 'refrelay_tasks',
      help: 'Task files in the store by state and remote (whole cluster).',
      labelNames: ['state', 'remote'],
      registers,
    });
    this.oldestWaiting = new Gauge({
      name: 'refrelay_oldest_waiting_seconds',
      help: 'Age of the oldest waiting task per remote (whole cluster).',
      labelNames: ['remote'],
      registers,
    });
    this.pushes = new Counter({
      name: 'refrelay_pushes_total',
      help: 'git pushes this node ran, by result (ok, partial, failed).',
      labelNames: ['remote', 'result'],
      registers,
    });
    this.pushDuration = new Histogram({
      name: 'refrelay_push_duration_seconds',
      help: 'Duration of one git push.',
      labelNames: ['remote'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.replicationDelay = new Histogram({
      name: 'refrelay_replication_delay_seconds',
      help: 'From the first enqueue of a batch to the start of its push.',
      labelNames: ['remote'],
      buckets: DELAY_BUCKETS,
      registers,
    });
    this.replicationLag = new Histogram({
      name: 'refrelay_replication_lag_seconds',
      help: 'From the first enqueue of a batch to its delivery.',
      labelNames: ['remote'],
      buckets: DELAY_BUCKETS,
      registers,
    });
    this.refs = new Counter({
      name: 'refrelay_refs_total',
      help: 'Refs pushed by this node, by outcome (updated, created, deleted, forced, up-to-date, rejected).',
      labelNames: ['remote', 'status'],
      registers,
    });
    this.failures = new Counter({
      name: 'refrelay_push_failures_total',
      help: 'Failed git pushes this node ran, by failure class (transient, unreachable, overloaded, auth, missing-repository, permanent, local-missing, timeout).',
      labelNames: ['remote', 'kind'],
      registers,
    });
    this.retries = new Counter({ name: 'refrelay_retries_total', help: 'Retries scheduled after a failed push.', labelNames: ['remote'], registers });
    this.takeovers = new Counter({
      name: 'refrelay_lock_takeovers_total',
      help: 'Stale URI locks this node took over from a dead or stuck holder.',
      registers,
    });
    this.quarantined = new Counter({ name: 'refrelay_quarantined_total', help: 'Unreadable task files this node moved to corrupt/.', registers });
    this.webhookDropped = new Counter({
      name: 'refrelay_webhook_events_dropped_total',
      help: "Events dropped from a webhook receiver's queue while it did not answer (the oldest go first; the log names the receiver).",
      registers,
    });
    this.nodes = new Gauge({ name: 'refrelay_nodes', help: 'Nodes of the cluster by heartbeat state.', labelNames: ['state'], registers });
    this.clockOffset = new Gauge({
      name: 'refrelay_clock_offset_seconds',
      help: "Each node's clock offset from the store's clock, as it measured it.",
      labelNames: ['node'],
      registers,
    });
    this.openCircuits = new Gauge({
      name: 'refrelay_host_circuits_open',
      help: 'Live nodes that stopped scheduling a destination host after connection failures (its circuit is open).',
      labelNames: ['host'],
      registers,
    });
    this.verifyDrift = new Gauge({
      name: 'refrelay_verify_drift',
      help: 'Destinations out of sync at the last periodic verify.',
      labelNames: ['remote'],
      registers,
    });
    const metrics = this;
    new Gauge({
      name: 'refrelay_spooled_tasks',
      help: "Tasks enqueue spooled on this node's machine because the store could not be written, not yet forwarded into the store.",
      registers,
      collect() {
        this.set(metrics.gauges.spooledTasks());
      },
    });
    new Gauge({
      name: 'refrelay_store_writable',
      help: "1 while this node's writes to the store succeed, 0 while they fail (a full, read-only or missing store).",
      registers,
      collect() {
        this.set(metrics.gauges.storeWritable() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'refrelay_running_pushes',
      help: 'URIs this node is pushing right now (push jobs holding their URI lock).',
      registers,
      collect() {
        this.set(metrics.gauges.runningPushes());
      },
    });
    new Gauge({
      name: 'refrelay_lock_stale_seconds',
      help: 'The lockStale setting: clocks further than a quarter of it from the store clock are unsafe.',
      registers,
      collect() {
        this.set(metrics.gauges.lockStaleMs() / 1000);
      },
    });
    // Present from the first scrape, so rate() and alerts work before the first event.
    this.takeovers.inc(0);
    this.quarantined.inc(0);
    this.webhookDropped.inc(0);
  }

  /** An event a webhook receiver will never get: its queue was full. */
  droppedWebhookEvent(): void {
    this.webhookDropped.inc();
  }

  /** Where this node's own gauges (spool, store writable, lockStale) read their values at each scrape. */
  track(gauges: NodeGauges): void {
    this.gauges = gauges;
  }

  record(event: ReplicationEvent): void {
    switch (event.type) {
      case 'pushed': {
        const ageAtEnd = Math.max(0, this.storeNow() - event.oldestQueuedAtMs) / 1000;
        this.pushes.inc({ remote: event.remote, result: event.result });
        this.pushDuration.observe({ remote: event.remote }, event.durationMs / 1000);
        this.replicationDelay.observe({ remote: event.remote }, Math.max(0, ageAtEnd - event.durationMs / 1000));
        if (event.result !== 'failed') this.replicationLag.observe({ remote: event.remote }, ageAtEnd);
        for (const [status, count] of Object.entries(event.outcomes)) this.refs.inc({ remote: event.remote, status }, count);
        if (event.failureKind !== undefined) this.failures.inc({ remote: event.remote, kind: event.failureKind });
        break;
      }
      case 'retry-scheduled':
        this.retries.inc({ remote: event.remote });
        break;
      case 'takeover':
        this.takeovers.inc();
        break;
      case 'quarantined':
        this.quarantined.inc();
        break;
      default:
        break;
    }
  }

  /** Sets the cluster-wide gauges from a store snapshot. */
  updateCluster(status: ClusterStatus): void {
    this.tasks.reset();
    this.oldestWaiting.reset();
    for (const remote of status.remotes) {
      this.tasks.set({ state: 'waiting', remote: remote.name }, remote.waiting);
      this.tasks.set({ state: 'running', remote: remote.name }, remote.running);
      this.tasks.set({ state: 'failed', remote: remote.name }, remote.failed);
      this.oldestWaiting.set({ remote: remote.name }, (remote.oldestWaitingAgeMs ?? 0) / 1000);
    }
    // Corrupt files cannot be attributed to a remote (they could not be read).
    this.tasks.set({ state: TASK_STATES[3], remote: '' }, status.totals.corrupt);
    this.nodes.reset();
    for (const state of ['alive', 'stale', 'stopped'] as const) {
      this.nodes.set({ state }, status.nodes.filter((node) => node.state === state).length);
    }
    this.clockOffset.reset();
    for (const node of status.nodes) {
      if (node.clockOffsetMs !== null && node.state !== 'stopped') this.clockOffset.set({ node: node.nodeId }, node.clockOffsetMs / 1000);
    }
    this.openCircuits.reset();
    for (const circuit of status.circuits) this.openCircuits.inc({ host: circuit.host });
    this.verifyDrift.reset();
    if (status.verify !== null) {
      for (const [remote, counts] of Object.entries(status.verify.byRemote)) this.verifyDrift.set({ remote }, counts.drifted);
    }
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
