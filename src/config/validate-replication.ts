import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Reporter, SectionValues } from './collect-sections.js';
import { formatDuration } from './duration.js';
import {
  optional,
  parseBoolean,
  parseDurationValue,
  parseHttpListen,
  parseNodeId,
  parseShares,
  parseWholeNumber,
  pathRelativeTo,
  readSetting,
  type Parsed,
} from './config-values.js';
import { resolveStorePath } from './store-path.js';
import type { ReplicationConfig } from './types.js';
import { webhookReceiverName, webhookUrlProblem } from './webhook-url.js';
import { DEFAULT_MAX_REF_NAME_BYTES } from '../task/names.js';

export const DEFAULT_HTTP_LISTEN = '127.0.0.1:9464';
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;
export const DEFAULT_BULK_SHARES = 25;
export const DEFAULT_USAGE_HALF_LIFE_MS = 5 * 60_000;
export const DEFAULT_FULL_LISTING_INTERVAL_MS = 5 * 60_000;
/**
 * A ref the destination keeps refusing for a reason that looks passing (it could not lock or
 * write the ref) while it takes the others is parked after this many attempts in a row.
 */
export const DEFAULT_REF_REJECTION_LIMIT = 3;
/** How long dropped failed tasks stay in failed/dropped/ for a look before a node deletes them. */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000;
/** Long enough for a busy NFS server, short enough that a hung mount does not hold a developer's push. */
export const DEFAULT_SPOOL_AFTER_MS = 5000;

export const DEFAULT_DISTRIBUTION_INTERVAL_MS = 10_000;

/** Two pushes per CPU: a push spends much of its time waiting on the network or the destination. */
export function defaultMaxPushes(): number {
  return 2 * availableParallelism();
}

/** `[replication]` and `[gerrit]` settings: everything of ReplicationConfig but the remotes. */
export type NodeSettings = Omit<ReplicationConfig, 'remotes' | 'warnings'> & { readonly defaultForceUpdate: boolean };

export function buildNodeSettings(replication: SectionValues, gerrit: SectionValues, file: string, hostname: string, report: Reporter): NodeSettings {
  const setting = <T>(key: string, parse: (text: string) => Parsed<T>, fallback: T): T =>
    readSetting(replication, key, `replication.${key}`, parse, fallback, report);
  const absoluteFile = resolve(file);
  const relativeToFile = pathRelativeTo(dirname(absoluteFile));

  // storePath wins over Gerrit's name for it, whatever their order in the file.
  const { storePath, storePathFrom } = resolveStorePath(replication, absoluteFile, report);

  return {
    file: absoluteFile,
    storePath,
    ...optional('storePathFrom', storePathFrom),
    basePath: setting<string | undefined>('basePath', relativeToFile, undefined),
    nodeId: setting('nodeId', parseNodeId, defaultNodeId(hostname, replication, report)),
    distributionIntervalMs: distributionInterval(replication, report),
    randomDelayMs: setting('randomDelay', (t) => parseDurationValue(t, 'seconds'), 1000),
    lockStaleMs: setting('lockStale', parseLockStale, 60_000),
    maxRetries: setting('maxRetries', (t) => parseWholeNumber(t, 0), 0),
    httpListen: setting('httpListen', parseHttpListen, DEFAULT_HTTP_LISTEN),
    shutdownGraceMs: setting('shutdownGrace', (t) => parseDurationValue(t, 'seconds'), DEFAULT_SHUTDOWN_GRACE_MS),
    defaultForceUpdate: readSetting(gerrit, 'defaultForceUpdate', 'gerrit.defaultForceUpdate', parseBoolean, false, report),
    watchRepositories: setting('watchRepositories', parseBoolean, false),
    watchRepositoriesLimit: setting('watchRepositoriesLimit', (t) => parseWholeNumber(t, 1), 1000),
    verifyIntervalMs: setting('verifyInterval', (t) => parseDurationValue(t, 'seconds'), 0),
    // Gerrit's names live in [gerrit]; refrelay also reads them from [replication].
    autoReload: setting('autoReload', parseBoolean, false) || readSetting(gerrit, 'autoReload', 'gerrit.autoReload', parseBoolean, false, report),
    replicateOnStartup:
      setting('replicateOnStartup', parseBoolean, false) || readSetting(gerrit, 'replicateOnStartup', 'gerrit.replicateOnStartup', parseBoolean, false, report),
    caughtUpThresholdMs: setting('caughtUpThreshold', (t) => parseDurationValue(t, 'seconds', true), 5 * 60_000),
    maxPushes: setting('maxPushes', (t) => parseWholeNumber(t, 1), defaultMaxPushes()),
    bulkShares: setting('bulkShares', parseShares, DEFAULT_BULK_SHARES),
    sshConnectionReuse: setting('sshConnectionReuse', parseBoolean, true),
    usageHalfLifeMs: setting('usageHalfLife', (t) => parseDurationValue(t, 'seconds', true), DEFAULT_USAGE_HALF_LIFE_MS),
    fullListingIntervalMs: setting('fullListingInterval', (t) => parseDurationValue(t, 'seconds', true), DEFAULT_FULL_LISTING_INTERVAL_MS),
    ...optional('secureConfig', secureConfigPath(replication, relativeToFile, setting)),
    allowInsecureSecrets: setting('allowInsecureSecrets', parseBoolean, false),
    storeUmask: setting('storeUmask', parseUmask, DEFAULT_STORE_UMASK),
    maxRefNameBytes: setting('maxRefNameBytes', (t) => parseWholeNumber(t, 1), DEFAULT_MAX_REF_NAME_BYTES),
    refRejectionLimit: setting('refRejectionLimit', (t) => parseWholeNumber(t, 1), DEFAULT_REF_REJECTION_LIMIT),
    ...optional('spoolPath', setting<string | undefined>('spoolPath', relativeToFile, undefined)),
    spoolAfterMs: setting('spoolAfter', (t) => parseDurationValue(t, 'seconds', true), DEFAULT_SPOOL_AFTER_MS),
    retentionMs: setting('retention', (t) => parseDurationValue(t, 'seconds'), DEFAULT_RETENTION_MS),
    ...optional(
      'httpToken',
      setting<string | undefined>('httpToken', (t) => (t.trim() === '' ? { ok: false, message: 'empty token' } : { ok: true, value: t.trim() }), undefined),
    ),
    ...optional('httpTokenFile', setting<string | undefined>('httpTokenFile', relativeToFile, undefined)),
    webhookUrls: webhookUrls(replication, report),
  };
}

/**
 * In Gerrit 0 is the default and turns its distributor off: each primary pushes only what it
 * queued. refrelay nodes always share the queue, and 0 would make them list the store without a
 * pause, so 0 takes the default interval, with a warning saying so.
 */
function distributionInterval(replication: SectionValues, report: Reporter): number {
  const key = 'replication.distributionInterval';
  const ms = readSetting(replication, 'distributionInterval', key, (t) => parseDurationValue(t, 'seconds'), DEFAULT_DISTRIBUTION_INTERVAL_MS, report);
  if (ms > 0) return ms;
  report.warning(
    key,
    `0 turns Gerrit's distributor off (its default), so each primary pushes only what it queued; refrelay nodes always ` +
      `share their queue through the store, so the default ${formatDuration(DEFAULT_DISTRIBUTION_INTERVAL_MS)} is used. ` +
      'Remove the key, or set how often each node should list waiting/',
  );
  return DEFAULT_DISTRIBUTION_INTERVAL_MS;
}

/** Every `webhookUrl`; one that is not an http(s) URL is a problem, named without its user, password or query. */
function webhookUrls(replication: SectionValues, report: Reporter): string[] {
  return (replication.get('webhookUrl') ?? []).flatMap((text) => {
    const trimmed = text.trim();
    const problem = webhookUrlProblem(trimmed);
    if (problem === undefined) return [trimmed];
    report.problem('replication.webhookUrl', `${problem}: ${webhookReceiverName(trimmed)}`);
    return [];
  });
}

/**
 * Heartbeat ticks are at least 250 ms apart (`schedule/job-heartbeat.ts`), and a holder whose
 * writes fail stops its push on the first tick past lockStale/2: by 750 ms at 1 s, still before
 * an observer takes the lock over at lockStale. Below about 500 ms it would not be.
 */
const MIN_LOCK_STALE_MS = 1000;

function parseLockStale(text: string): Parsed<number> {
  const parsed = parseDurationValue(text, 'seconds', true);
  if (!parsed.ok || parsed.value >= MIN_LOCK_STALE_MS) return parsed;
  return {
    ok: false,
    message:
      `expected at least ${formatDuration(MIN_LOCK_STALE_MS)} (a holder that cannot write its lock heartbeat stops its push up to one ` +
      'heartbeat, 250ms at the least, after lockStale/2; under 1s that comes too close to lockStale, when a peer takes the lock ' +
      `over), got "${text}"`,
  };
}

/** Files 0640, folders 0750: the store holds repository names and destination URLs. */
export const DEFAULT_STORE_UMASK = 0o027;

/**
 * An octal umask such as `027` or `0027`. It may not take anything from the owner: the node
 * must write into the folders it makes and read back the files it writes, or `init` stops
 * halfway with EACCES and leaves a store no one but root can finish.
 */
export function parseUmask(text: string): Parsed<number> {
  const trimmed = text.trim();
  if (!/^0?[0-7]{3}$/.test(trimmed)) return { ok: false, message: `expected an octal umask such as 027, got "${text}"` };
  const value = Number.parseInt(trimmed, 8);
  if ((value & 0o700) !== 0) {
    return {
      ok: false,
      message:
        'expected a umask whose owner digit is 0, such as 027 or 077 (refrelay must read, write and enter everything it creates ' +
        `in the store, or init and the daemon fail halfway), got "${text}"`,
    };
  }
  return { ok: true, value };
}

/** `secureConfig` as set, else Gerrit's place for it: `secure.config` beside the config file, when present. */
function secureConfigPath(
  replication: SectionValues,
  relativeToFile: (text: string) => Parsed<string>,
  setting: <T>(key: string, parse: (text: string) => Parsed<T>, fallback: T) => T,
): string | undefined {
  if (replication.has('secureConfig')) return setting<string | undefined>('secureConfig', relativeToFile, undefined);
  const beside = relativeToFile('secure.config');
  return beside.ok && existsSync(beside.value) ? beside.value : undefined;
}

function defaultNodeId(hostname: string, replication: SectionValues, report: Reporter): string {
  if (replication.has('nodeId')) return hostname;
  const parsed = parseNodeId(hostname);
  if (parsed.ok) return parsed.value;
  report.problem('replication.nodeId', `not set, and the hostname "${hostname}" cannot be used as one; set nodeId`);
  return hostname;
}
