import { readFile } from 'node:fs/promises';
import type { ReplicationConfig } from '../config/types.js';
import { collectClusterStatus, type ClusterStatus, type StatusOptions } from '../observe/cluster-status.js';
import { QUEUE_SUMMARY_MIN_URIS } from '../observe/waiting-count.js';
import type { ReplicationEvent } from '../schedule/events.js';
import { startHttpServer, type RunningHttpServer } from '../observe/http-server.js';
import type { Log } from '../runtime/log.js';
import { NodeMetrics } from '../observe/metrics.js';
import { UriHistory } from '../observe/uri-history.js';
import { RemoteDelivery } from '../observe/remote-delivery.js';
import { persistQueueSummary, QUEUE_SUMMARY_EVERY_MS, summarizeQueue } from '../observe/queue-summary.js';
import type { Clock } from '../runtime/clock.js';
import { EventPublisher } from '../observe/event-publisher.js';
import { MinuteTrend, persistTrend } from '../observe/trend.js';
import { systemTimers } from '../runtime/timers.js';
import type { StoreEvent } from '../store/store-types.js';
import type { TaskStore } from '../store/task-store.js';
import type { DaemonObservability, DaemonView } from './daemon.js';

/** Scrapes, page refreshes and probes within this long share one read of the store. */
const STATUS_CACHE_MS = 1000;
/**
 * The history file is rewritten whole: with a short distributionInterval, once per beat would
 * rewrite it many times a second during a burst. `status` on other nodes can wait a second.
 */
const HISTORY_PERSIST_EVERY_MS = 1000;

/**
 * Metrics, per-URI history and the HTTP endpoints of one node. Counters come from this node's
 * events; everything cluster-wide is read from the store, so any node shows the whole cluster.
 */
export class NodeObservability implements DaemonObservability {
  readonly metrics: NodeMetrics;
  readonly history: UriHistory;
  private readonly delivery: RemoteDelivery;
  private readonly publisher: EventPublisher;
  private readonly trend: MinuteTrend;
  private view: DaemonView | undefined;
  private server: RunningHttpServer | undefined;
  private statusCache: { at: number; value: Promise<ClusterStatus> } | undefined;
  /** The last failure to read httpTokenFile, logged once until it changes or the file reads again. */
  private tokenFileError: string | undefined;
  /** Monotonic time of the last history write (HISTORY_PERSIST_EVERY_MS). */
  private persistedAt = Number.NEGATIVE_INFINITY;
  /** Monotonic time of the last queue summary written (QUEUE_SUMMARY_EVERY_MS). */
  private summarizedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: ReplicationConfig,
    private readonly store: TaskStore,
    private readonly clock: Clock,
    private readonly log: Log,
    options: { webhookSecret?: string | undefined } = {},
  ) {
    const storeNow = (): number => this.storeNow();
    this.metrics = new NodeMetrics(storeNow);
    this.history = new UriHistory(config.nodeId, storeNow);
    this.delivery = new RemoteDelivery(clock.now());
    this.trend = new MinuteTrend(storeNow);
    this.publisher = new EventPublisher({
      nodeId: config.nodeId,
      webhookUrls: config.webhookUrls,
      webhookSecret: options.webhookSecret,
      clock,
      timers: systemTimers,
      log,
      onWebhookDropped: () => this.metrics.droppedWebhookEvent(),
    });
  }

  readonly events = (event: ReplicationEvent): void => {
    this.metrics.record(event);
    this.history.record(event);
    this.delivery.record(event, this.clock.now());
    this.publisher.record(event);
    if (event.type === 'pushed') this.trend.recordPush(event.remote, event.result === 'failed');
  };

  /** The store's own events (a task file quarantined): logged and counted. */
  readonly storeEvents = (event: StoreEvent): void => {
    if (event.type === 'store-marked') {
      this.log.warn({ store: event.root }, event.opening === 'adopted' ? "adopted an earlier refrelay's store: wrote its marker" : 'created the store');
    } else if (event.type === 'folder-recreated') {
      this.log.warn({ folder: event.path }, 'a store folder was missing; made it again (was it removed by hand?)');
    } else if (event.type === 'waiting-task-left') {
      this.log.warn({ file: event.path, reason: event.reason }, 'a flat task file in waiting/ could not be moved into its URI folder and is not pushed');
    } else if (event.type === 'stale-waiting-folder') {
      this.log.warn(
        { folder: event.path, movedTo: event.movedTo },
        'this client still sees a waiting folder a claim took (a stale lookup on a network filesystem); the task went to the top of waiting/ for a node to sort',
      );
    } else if (event.type === 'quarantined') {
      this.log.warn({ file: event.path, movedTo: event.movedTo, reason: event.reason }, 'task file quarantined');
      this.events({ type: 'quarantined', file: event.movedTo, reason: event.reason });
    } else {
      this.log.error({ file: event.path, reason: event.reason, err: String(event.error) }, 'could not quarantine a task file');
    }
  };

  async start(view: DaemonView): Promise<void> {
    this.view = view;
    this.metrics.track({
      spooledTasks: () => view.spooledTasks(),
      storeWritable: () => view.storeWritable(),
      lockStaleMs: () => view.config().lockStaleMs,
      runningPushes: () => view.runningPushes(),
    });
    const listen = this.config.httpListen;
    if (listen === 'off') return;
    try {
      this.server = await this.listen(listen, view);
    } catch (error) {
      // Replication matters more than its dashboard: the node runs on, and says why loudly.
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'EADDRINUSE'
          ? 'the address is in use (another node on this host? give each its own httpListen)'
          : error instanceof Error
            ? error.message
            : String(error);
      this.log.warn({ httpListen: listen, err: why }, 'http endpoints not available: cannot listen');
      return;
    }
    this.log.info({ address: this.server.address }, 'http endpoints listening: /metrics /healthz /readyz /status and the page at /');
  }

  private listen(listen: string, view: DaemonView): Promise<RunningHttpServer> {
    return startHttpServer(listen, {
      metrics: this.metrics,
      clusterStatus: () => this.clusterStatus(),
      schedule: () => view.schedule(),
      health: () => view.health(),
      caughtUpThresholdMs: () => view.config().caughtUpThresholdMs,
      spooledTasks: () => view.spooledTasks(),
      failingRemotes: (waiting, thresholdMs) => this.delivery.failing(waiting, this.clock.now(), thresholdMs),
      oldestWaiting: () => view.oldestWaitingByRemote(this.clock.now()),
      retry: async ({ uriKey, names }) => {
        const retried = await this.store.retryFailed((task) => task.uriKey === uriKey && (names === undefined || names.includes(task.name)));
        this.statusCache = undefined;
        return retried;
      },
      drop: async ({ uriKey, names, from }) => {
        const { dropped } = await this.store.dropFailed((task) => task.uriKey === uriKey && names.includes(task.name), {
          by: `http client ${from}`,
          via: 'http',
          nodeId: this.config.nodeId,
        });
        this.statusCache = undefined;
        return dropped.length;
      },
      events: this.publisher.listen,
      token: () => this.token(view.config()),
      log: this.log,
    });
  }

  async afterBeat(): Promise<void> {
    const now = this.clock.monotonic();
    if (now - this.summarizedAt >= QUEUE_SUMMARY_EVERY_MS) {
      const waiting = this.view?.waitingUris();
      if (waiting !== undefined) {
        this.summarizedAt = now;
        const summary = summarizeQueue(this.config.nodeId, waiting, this.view?.queueLearned() === true, this.storeNow());
        this.trend.sampleWaiting(Object.fromEntries(Object.entries(summary.remotes).map(([remote, totals]) => [remote, totals.tasks])));
        await persistQueueSummary(this.config.storePath, summary);
        await persistTrend(this.config.storePath, this.config.nodeId, this.trend.snapshot());
      }
    }
    if (now - this.persistedAt < HISTORY_PERSIST_EVERY_MS) return;
    this.persistedAt = now;
    await this.history.persist(this.config.storePath);
  }

  async stop(): Promise<void> {
    this.publisher.stop();
    await this.server?.close();
    this.server = undefined;
    await this.history.persist(this.config.storePath).catch(() => undefined);
  }

  private clusterStatus(): Promise<ClusterStatus> {
    const now = this.clock.monotonic();
    const cached = this.statusCache;
    if (cached !== undefined && now - cached.at < STATUS_CACHE_MS) return cached.value;
    const config = this.view?.config() ?? this.config;
    const value = collectClusterStatus(config, this.store, this.clock, { storeClockOffsetMs: this.view?.storeClockOffsetMs() ?? null, ...this.ownCount() });
    this.statusCache = { at: now, value };
    value.catch(() => {
      if (this.statusCache?.value === value) this.statusCache = undefined;
    });
    return value;
  }

  /**
   * The queue as this node's last pass listed it (a request never lists waiting/ again): per URI
   * on a short queue, else summarized here, before any read of the store is awaited.
   */
  private ownCount(): Pick<StatusOptions, 'waiting' | 'summary'> {
    const view = this.view;
    const uris = view?.waitingUris();
    if (view === undefined || uris === undefined) return {};
    if ((view.waitingUriCount() ?? 0) < QUEUE_SUMMARY_MIN_URIS) return { waiting: [...uris] };
    return { summary: summarizeQueue(this.config.nodeId, uris, view.queueLearned(), this.storeNow()) };
  }

  /** The store's clock as this node measured it (its own before the first measurement). */
  private storeNow(): number {
    return this.clock.now() + (this.view?.storeClockOffsetMs() ?? 0);
  }

  /** httpToken, else the first line of httpTokenFile (read per request, so a rotated file applies). */
  private async token(config: ReplicationConfig): Promise<string | undefined> {
    if (config.httpToken !== undefined) return config.httpToken;
    if (config.httpTokenFile === undefined) return undefined;
    try {
      const token = (await readFile(config.httpTokenFile, 'utf8')).split('\n')[0]!.trim();
      this.tokenFileError = undefined;
      return token === '' ? undefined : token;
    } catch (error) {
      // The page asks on every refresh (every few seconds per open tab): say it once per cause.
      const message = error instanceof Error ? error.message : String(error);
      if (message !== this.tokenFileError)
        this.log.error({ file: config.httpTokenFile, err: message }, 'cannot read httpTokenFile: retry over the network is refused');
      this.tokenFileError = message;
      return undefined;
    }
  }
}
