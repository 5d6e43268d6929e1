import { keyedRecord } from '../runtime/json-object.js';
import { lstat, mkdir, rm } from 'node:fs/promises';
import { replaceJsonFile } from '../runtime/replace-json-file.js';
import { join } from 'node:path';
import type { ReplicationConfig } from '../config/types.js';
import { discoverProjects } from '../intake/project-discovery.js';
import type { Credentials } from '../config/secure-config.js';
import { verifyAll, type DriftReport } from '../intake/verify.js';
import { destinationsOf } from '../intake/plan-tasks.js';
import type { Log } from '../runtime/log.js';
import { errnoName } from '../runtime/errno.js';
import type { Clock } from '../runtime/clock.js';
import type { Random } from '../runtime/random.js';
import { operatorSshEnv } from '../push/push-env.js';
import { readVerifySummary } from '../observe/verify-summary.js';

/** `verify/last.json` in the store: what `status` shows of the last periodic verify. */
export interface VerifySummary {
  readonly version: 1;
  readonly nodeId: string;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly destinations: number;
  readonly drifted: number;
  readonly unreachable: number;
  readonly byRemote: Record<string, { destinations: number; drifted: number; unreachable: number }>;
  /** The drifted and unreachable destinations (redacted), first 50. */
  readonly problems: ReadonlyArray<Pick<DriftReport, 'remote' | 'uri' | 'state' | 'error'> & { missing: number; different: number; extra: number }>;
}

/**
 * `replication.verifyInterval`: one node at a time (an mkdir lock in the store) runs `verify`
 * over every destination and publishes a summary for `status`. A lock left by a node that died
 * mid-run is broken once it is older than two intervals on the store's clock.
 */
export class PeriodicVerify {
  private running = false;
  private lastAttempt = -Infinity;

  constructor(
    /** StorePaths.verify: the run lock and the summary. */
    private readonly dir: string,
    private readonly config: () => ReplicationConfig,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly log: Log,
    private readonly storeOffsetMs: () => number,
    private readonly credentials?: Credentials,
  ) {}

  /** Called every pass; starts a run in the background when one is due. */
  maybeRun(): void {
    const config = this.config();
    if (config.verifyIntervalMs <= 0 || this.running) return;
    const now = this.clock.monotonic();
    if (now - this.lastAttempt < config.verifyIntervalMs / 4) return;
    this.lastAttempt = now;
    this.running = true;
    void this.runIfDue()
      .catch((error: unknown) => this.log.warn({ err: String(error) }, 'periodic verify failed'))
      .finally(() => {
        this.running = false;
      });
  }

  /** One run when no node finished one within the interval and no other holds the run lock (maybeRun's work). */
  async runIfDue(): Promise<void> {
    const config = this.config();
    const storeNow = this.clock.now() + this.storeOffsetMs();
    if (await this.ranLately(config, storeNow)) return;
    const lock = join(this.dir, 'run.lock');
    try {
      await mkdir(lock);
    } catch (error) {
      if (errnoName(error) !== 'EEXIST') throw error;
      // lstat: a link planted as the lock is judged, and removed, as itself.
      const held = await lstat(lock).catch(() => undefined);
      if (held === undefined || Math.abs(storeNow - held.mtimeMs) < 2 * config.verifyIntervalMs) return;
      this.log.warn({ lockAgeMs: storeNow - held.mtimeMs }, 'breaking an abandoned verify lock');
      await rm(lock, { recursive: true, force: true });
      return;
    }
    try {
      // Read again under the lock: a peer may have finished a run, and released the lock, since
      // the check above; without this, two runs come back to back.
      if (!(await this.ranLately(config, storeNow))) await this.runOnce(config);
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }

  /** Whether a run, by any node, finished less than an interval ago. */
  private async ranLately(config: ReplicationConfig, storeNow: number): Promise<boolean> {
    const last = await readVerifySummary(this.dir);
    // A finish time further ahead than an interval (a skewed clock, a hand-edited file) counts as
    // no run: else no node would run verify, and replace the file, again.
    return last !== undefined && Math.abs(storeNow - last.finishedAt) < config.verifyIntervalMs;
  }

  private async runOnce(config: ReplicationConfig): Promise<void> {
    if (config.basePath === undefined) return;
    const startedAt = this.clock.now();
    const destinations = destinationsOf(config, await discoverProjects(config.basePath), []);
    const env = operatorSshEnv();
    const reports = await verifyAll(config, destinations, { parallel: 4, timeoutMs: 60_000, env, credentials: this.credentials });
    const byRemote: VerifySummary['byRemote'] = keyedRecord();
    for (const report of reports) {
      const entry = (byRemote[report.remote] ??= { destinations: 0, drifted: 0, unreachable: 0 });
      entry.destinations++;
      if (report.state === 'drift') entry.drifted++;
      if (report.state === 'unreachable') entry.unreachable++;
    }
    const problems = reports.filter((report) => report.state !== 'in-sync');
    const summary: VerifySummary = {
      version: 1,
      nodeId: config.nodeId,
      startedAt,
      finishedAt: this.clock.now(),
      destinations: reports.length,
      drifted: problems.filter((report) => report.state === 'drift').length,
      unreachable: problems.filter((report) => report.state === 'unreachable').length,
      byRemote,
      problems: problems.slice(0, 50).map((report) => ({
        remote: report.remote,
        uri: report.uri,
        state: report.state,
        ...(report.error === undefined ? {} : { error: report.error }),
        missing: report.missing.length,
        different: report.different.length,
        // Extra refs a non-mirror remote keeps are not drift, so not counted in a DRIFT line.
        extra: report.mirror ? report.extra.length : 0,
      })),
    };
    await replaceJsonFile(join(this.dir, `.last.${this.random.token()}.tmp`), join(this.dir, 'last.json'), summary);
    this.log.info({ destinations: summary.destinations, drifted: summary.drifted, unreachable: summary.unreachable }, 'periodic verify finished');
  }
}
