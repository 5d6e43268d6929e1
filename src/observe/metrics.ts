import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ClusterStatus } from './cluster-status.js';
import type { ReplicationEvent } from '../schedule/events.js';

/** Push and delay buckets, in seconds: sub-second local pushes up to an hour-long backlog. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const DELAY_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

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
  private readonly tasks = this.gauge('refrelay_tasks', 'Task files in the store by state and remote (whole cluster).', ['state', 'remote']);
  private readonly oldestWaiting = this.gauge('refrelay_oldest_waiting_seconds', 'Age of the oldest waiting task per remote (whole cluster).', ['remote']);
  private readonly pushes = this.counter('refrelay_pushes_total', 'git pushes this node ran, by result (ok, partial, failed).', ['remote', 'result']);
  private readonly pushDuration = this.histogram('refrelay_push_duration_seconds', 'Duration of one git push.', DURATION_BUCKETS);
  private readonly replicationDelay = this.histogram(
    'refrelay_replication_delay_seconds',
    'From the first enqueue of a batch to the start of its push.',
    DELAY_BUCKETS,
  );
  private readonly replicationLag = this.histogram('refrelay_replication_lag_seconds', 'From the first enqueue of a batch to its delivery.', DELAY_BUCKETS);
  private readonly refs = this.counter(
    'refrelay_refs_total',
    'Refs pushed by this node, by outcome (updated, created, deleted, forced, up-to-date, rejected).',
    ['remote', 'status'],
  );
  private readonly failures = this.counter(
    'refrelay_push_failures_total',
    'Failed git pushes this node ran, by failure class (transient, unreachable, overloaded, auth, missing-repository, permanent, local-missing, timeout).',
    ['remote', 'kind'],
  );
  private readonly retries = this.counter('refrelay_retries_total', 'Retries scheduled after a failed push.', ['remote']);
  private readonly takeovers = this.counter('refrelay_lock_takeovers_total', 'Stale URI locks this node took over from a dead or stuck holder.');
  private readonly quarantined = this.counter('refrelay_quarantined_total', 'Unreadable task files this node moved to corrupt/.');
  private readonly webhookDropped = this.counter(
    'refrelay_webhook_events_dropped_total',
    "Events dropped from a webhook receiver's queue while it did not answer (the oldest go first; the log names the receiver).",
  );
  private readonly nodes = this.gauge('refrelay_nodes', 'Nodes of the cluster by heartbeat state.', ['state']);
  private readonly clockOffset = this.gauge('refrelay_clock_offset_seconds', "Each node's clock offset from the store's clock, as it measured it.", ['node']);
  private readonly openCircuits = this.gauge(
    'refrelay_host_circuits_open',
    'Live nodes that stopped scheduling a destination host after connection failures (its circuit is open).',
    ['host'],
  );
  private readonly verifyDrift = this.gauge('refrelay_verify_drift', 'Destinations out of sync at the last periodic verify.', ['remote']);
  private gauges: NodeGauges = { spooledTasks: () => 0, storeWritable: () => true, lockStaleMs: () => 0, runningPushes: () => 0 };

  constructor(private readonly storeNow: () => number) {
    this.readAtScrape(
      'refrelay_spooled_tasks',
      "Tasks enqueue spooled on this node's machine because the store could not be written, not yet forwarded into the store.",
      () => this.gauges.spooledTasks(),
    );
    this.readAtScrape(
      'refrelay_store_writable',
      "1 while this node's writes to the store succeed, 0 while they fail (a full, read-only or missing store).",
      () => (this.gauges.storeWritable() ? 1 : 0),
    );
    this.readAtScrape('refrelay_running_pushes', 'URIs this node is pushing right now (push jobs holding their URI lock).', () => this.gauges.runningPushes());
    this.readAtScrape(
      'refrelay_lock_stale_seconds',
      'The lockStale setting: clocks further than a quarter of it from the store clock are unsafe.',
      () => this.gauges.lockStaleMs() / 1000,
    );
  }

  private gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  private counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** Labelled by remote. */
  private histogram(name: string, help: string, buckets: number[]): Histogram<'remote'> {
    return new Histogram({ name, help, labelNames: ['remote'], buckets, registers: [this.registry] });
  }

  /** A gauge set from `read` right before each scrape. */
  private readAtScrape(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
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
    this.tasks.set({ state: 'corrupt', remote: '' }, status.totals.corrupt);
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
