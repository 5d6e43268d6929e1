import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { loadSecrets } from '../config/secure-config.js';
import type { Log } from '../runtime/log.js';
import { Daemon } from '../daemon/daemon.js';
import { createLogger, defaultLogFormat, type LogFormat, type LogLevel } from '../observe/logger.js';
import { NodeObservability } from '../daemon/node-observability.js';
import type { StoreEvent } from '../store/store-types.js';
import { GitPusher } from '../push/git-pusher.js';
import { SshConnectionReuse } from '../push/ssh-reuse.js';
import { offsetClock, systemClock } from '../runtime/clock.js';
import { systemRandom } from '../runtime/random.js';
import { systemTimers } from '../runtime/timers.js';
import { TaskStore } from '../store/task-store.js';
import { spoolDirFor } from '../intake/spool.js';
import { UsageError } from '../errors.js';
import { drainReport } from './drain-summary.js';
import { checkGerritEventsDir } from './store-path-check.js';
import { loadCliConfig, localSpoolPath } from './load-cli-config.js';
import { VERSION } from './version.js';
import { operatorSshEnv } from '../push/push-env.js';

export interface DaemonArgs {
  config?: string | undefined;
  nodeId?: string | undefined;
  drain: boolean;
  logLevel: LogLevel;
  logFormat?: LogFormat | undefined;
}

/** Anyone on the host could queue pushes to any configured destination, or delete the queue. */
function warnIfWorldWritable(storePath: string, log: Log): void {
  try {
    const mode = statSync(storePath).mode & 0o777;
    if ((mode & 0o002) !== 0) {
      log.warn(
        { storePath, mode: mode.toString(8).padStart(4, '0') },
        'the store folder is world-writable: any local user can add or remove replication tasks; chmod o-w it',
      );
    }
  } catch {
    // Not there yet: the store creates it with storeUmask.
  }
}

/**
 * SIGTERM and SIGINT ask the node to stop; a second one stops it at once. SIGHUP re-reads the
 * config. The handlers go in before anything else runs and stay until the process exits: a signal
 * while the node starts (config, a slow store mount) or winds down must be a request, never the
 * default kill, which a service manager reports as a crash.
 */
class NodeSignals {
  /** The first stop signal: a second one does not wait for anything. */
  private signal: NodeJS.Signals | undefined;
  private daemon: Daemon | undefined;
  private log: Log | undefined;

  constructor() {
    process.on('SIGTERM', this.onSignal);
    process.on('SIGINT', this.onSignal);
    // Before the node exists the config is being read anyway: nothing to re-read.
    process.on('SIGHUP', () => this.daemon?.reload('SIGHUP'));
  }

  /** From here on a stop request goes to `daemon`; one that came before it is passed on now. */
  attach(daemon: Daemon, log: Log): void {
    this.daemon = daemon;
    this.log = log;
    if (this.signal === undefined) return;
    log.info({ signal: this.signal }, 'stopping: finishing running pushes');
    daemon.requestStop();
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.signal === undefined) {
      this.signal = signal;
      this.log?.info({ signal }, 'stopping: finishing running pushes');
      this.daemon?.requestStop();
      return;
    }
    // Second signal: stop now. Claims stay in running/ and are recovered like after a crash.
    this.log?.warn({ signal }, 'stopping at once');
    process.exit(1);
  };
}

export async function runDaemon(args: DaemonArgs): Promise<number> {
  const nodeSignals = new NodeSignals();
  const config = loadCliConfig({ config: args.config, nodeId: args.nodeId });
  if (config.basePath === undefined) throw new UsageError(`daemon: replication.basePath is not set in ${config.file}; it is where the local repositories are`);
  const gerritFiles = await checkGerritEventsDir(config);
  const log = createLogger({ level: args.logLevel, nodeId: config.nodeId, format: args.logFormat ?? defaultLogFormat() });
  for (const warning of config.warnings) log.warn({ file: warning.file, key: warning.key }, warning.message);
  if (gerritFiles !== undefined) log.warn({ key: 'replication.storePath' }, gerritFiles);
  // Refused here, before anything runs: a secure.config others can read is a leak waiting to happen.
  const { credentials, webhookSecret } = loadSecrets(config);
  warnIfWorldWritable(config.storePath, log);
  // Test-only: run this node with a skewed wall clock (monotonic time is untouched), to prove that
  // skew between nodes cannot cause a lock takeover.
  const skewMs = Number(process.env.REFRELAY_TEST_CLOCK_OFFSET_MS ?? 0) || 0;
  const clock = offsetClock(systemClock, skewMs);
  // The store reports quarantined files; the observability side (built on the store) logs and counts them.
  let storeEvents: (event: StoreEvent) => void = () => undefined;
  const store = new TaskStore({
    root: config.storePath,
    nodeId: config.nodeId,
    clock,
    onEvent: (event) => storeEvents(event),
    ifUnmarked: 'adopt-earlier',
    emptyFolderAgeMs: () => config.lockStaleMs,
    fullListingIntervalMs: config.fullListingIntervalMs,
  });
  const observability = new NodeObservability(config, store, clock, log, { webhookSecret });
  storeEvents = observability.storeEvents;
  const daemon = new Daemon({
    config,
    store,
    // An operator's GIT_SSH_COMMAND (keys, jump hosts) applies to every ssh destination.
    pusher: new GitPusher({ env: operatorSshEnv(), ...(config.sshConnectionReuse ? { sshConnectionReuse: new SshConnectionReuse() } : {}), credentials }),
    clock,
    random: systemRandom,
    timers: systemTimers,
    log,
    host: hostname(),
    pid: process.pid,
    version: VERSION,
    drain: args.drain,
    shutdownGraceMs: config.shutdownGraceMs,
    reloadConfig: () => loadCliConfig({ config: config.file, nodeId: args.nodeId }),
    observability,
    credentials,
    spoolDir: spoolDirFor(localSpoolPath(config.spoolPath), config.storePath),
  });
  nodeSignals.attach(daemon, log);
  // On the node's own clock, as the reason records it writes: what this run parked is what --drain reports.
  const startedAt = clock.now();
  const code = await daemon.run();
  if (args.drain && daemon.failedTasks > 0) process.stderr.write(await drainReport(store, config.nodeId, startedAt, clock, daemon.failedTasks));
  return code;
}
