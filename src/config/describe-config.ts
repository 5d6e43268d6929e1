import { formatConfigProblem } from '../errors.js';
import { describeDeletes } from './delete-rule.js';
import { formatDuration } from './duration.js';
import { redactUrl } from '../runtime/redact.js';
import { webhookReceiverName } from './webhook-url.js';
import { styleProjectName } from './remote-url.js';
import type { RemoteConfig, ReplicationConfig, StorePathOrigin } from './types.js';

const REDACTED = '(set, hidden)';

/** Human-readable summary for `refrelay config check`; URL passwords and tokens are hidden. */
export function describeConfig(config: ReplicationConfig): string {
  const lines = [
    `config: ${config.file}`,
    `storePath: ${config.storePath}${config.storePathFrom === undefined ? '' : ` (${storePathOrigin(config.storePathFrom)})`}`,
    `basePath: ${config.basePath ?? '(not set)'}`,
    `nodeId: ${config.nodeId}`,
    `distributionInterval: ${formatDuration(config.distributionIntervalMs)}`,
    `randomDelay: ${formatDuration(config.randomDelayMs)}`,
    `lockStale: ${formatDuration(config.lockStaleMs)}`,
    `maxRetries: ${retries(config.maxRetries)}`,
    `httpListen: ${config.httpListen}`,
    `shutdownGrace: ${formatDuration(config.shutdownGraceMs)}`,
    `caughtUpThreshold: ${formatDuration(config.caughtUpThresholdMs)}`,
    `maxPushes: ${config.maxPushes}`,
    `bulkShares: ${config.bulkShares}`,
    `usageHalfLife: ${formatDuration(config.usageHalfLifeMs)}`,
    `fullListingInterval: ${formatDuration(config.fullListingIntervalMs)}`,
    `sshConnectionReuse: ${config.sshConnectionReuse}`,
    `secureConfig: ${config.secureConfig ?? '(none)'}${config.allowInsecureSecrets ? ' (insecure permissions allowed)' : ''}`,
    `storeUmask: ${config.storeUmask.toString(8).padStart(3, '0')}`,
    `maxRefNameBytes: ${config.maxRefNameBytes}`,
    `refRejectionLimit: ${config.refRejectionLimit}`,
    `spoolPath: ${config.spoolPath ?? '(default for the user)'}`,
    `spoolAfter: ${formatDuration(config.spoolAfterMs)}`,
    `retention: ${formatDuration(config.retentionMs)}`,
    ...(config.httpToken === undefined ? [] : [`httpToken: ${REDACTED}`]),
    ...(config.httpTokenFile === undefined ? [] : [`httpTokenFile: ${config.httpTokenFile}`]),
    ...config.webhookUrls.map((url) => `webhookUrl: ${webhookReceiverName(url)}`),
  ];
  const from = config.remotesDir === undefined ? '' : ` (from ${config.remotesDir}/*.config)`;
  lines.push('', `remotes: ${config.remotes.length}${from}`);
  for (const remote of config.remotes) lines.push('', ...describeRemote(remote));
  if (config.warnings.length > 0) {
    lines.push('', `warnings: ${config.warnings.length}`);
    for (const warning of config.warnings) lines.push(`  ${formatConfigProblem(warning)}`);
  }
  return `${lines.join('\n')}\n`;
}

function describeRemote(remote: RemoteConfig): string[] {
  const list = (items: readonly string[], none: string): string => (items.length > 0 ? items.join(', ') : none);
  const lines = [
    `remote "${remote.name}"`,
    ...(remote.file === undefined ? [] : [`  from: ${remote.file}`]),
    ...remote.urls.map((url) => `  url: ${redactUrl(url)}`),
    ...remote.push.map((spec) => `  push: ${spec.text}${spec.force ? ' (forced)' : ''}`),
    `  projects: ${list(
      remote.projects.map((p) => p.text),
      'all',
    )}`,
    `  excludeProjects: ${list(
      remote.excludeProjects.map((p) => p.text),
      'none',
    )}`,
    `  excludedRefsPattern: ${list(
      remote.excludedRefsPatterns.map((pattern) => pattern.text),
      'none',
    )}`,
    `  replicatePermissions: ${remote.replicatePermissions}`,
    `  replicateNoteDbMetaRefs: ${remote.replicateNoteDbMetaRefs}`,
    `  threads: ${remote.threads}`,
    `  shares: ${remote.shares}`,
    `  replicationDelay: ${formatDuration(remote.replicationDelayMs)}`,
    `  rescheduleDelay: ${formatDuration(remote.rescheduleDelayMs)}`,
    `  replicationRetry: ${formatDuration(remote.replicationRetryMs)}`,
    `  replicationMaxRetries: ${retries(remote.replicationMaxRetries)}`,
    `  timeout: ${remote.timeoutMs === 0 ? 'none' : `${formatDuration(remote.timeoutMs)} without progress`}`,
    `  pushDeadline: ${remote.pushDeadlineMs === 0 ? 'none' : formatDuration(remote.pushDeadlineMs)}`,
    `  mirror: ${remote.mirror}`,
    `  deletes: ${describeDeletes(remote)}`,
    `  createMissingRepositories: ${remote.createMissingRepositories}`,
    `  remoteNameStyle: ${remote.remoteNameStyle}`,
    ...(remote.sshIdentity === undefined ? [] : [`  sshIdentity: ${remote.sshIdentity}`]),
    ...(remote.sshCommand === undefined ? [] : [`  sshCommand: ${remote.sshCommand}`]),
    `  sshStrictHostKeyChecking: ${remote.sshStrictHostKeyChecking}`,
  ];
  for (const note of basenameNotes(remote)) lines.push(`  note: ${note}`);
  return lines;
}

function storePathOrigin(origin: StorePathOrigin): string {
  const where = origin.gerritSite ? `the Gerrit site ${origin.relativeTo}, as Gerrit does` : `the config file's folder ${origin.relativeTo}`;
  return `${origin.key} "${origin.written}" taken from ${where}`;
}

/**
 * Gerrit's basenameOnly also drops what follows the last dot of the name (`plugins/foo.bar` →
 * `foo`). Earlier refrelay versions kept it, so the exact project names where the two differ are
 * spelled out: their destination is not the repository an operator may expect.
 */
export function basenameNotes(remote: RemoteConfig): string[] {
  if (remote.remoteNameStyle !== 'basenameOnly') return [];
  const notes: string[] = [];
  for (const pattern of remote.projects) {
    if (pattern.kind !== 'exact') continue;
    const lastSegment = pattern.text.slice(pattern.text.lastIndexOf('/') + 1);
    const name = styleProjectName(pattern.text, 'basenameOnly');
    if (name !== lastSegment) {
      notes.push(`basenameOnly pushes project "${pattern.text}" as "${name}", not "${lastSegment}": as in Gerrit, the name ends at its last dot`);
    }
  }
  return notes;
}

/** Plain JSON for `config check --json`: durations in ms, patterns as their text. */
export function configToJson(config: ReplicationConfig): Record<string, unknown> {
  return {
    file: config.file,
    storePath: config.storePath,
    storePathFrom: config.storePathFrom ?? null,
    basePath: config.basePath ?? null,
    nodeId: config.nodeId,
    distributionIntervalMs: config.distributionIntervalMs,
    randomDelayMs: config.randomDelayMs,
    lockStaleMs: config.lockStaleMs,
    maxRetries: config.maxRetries,
    httpListen: config.httpListen,
    shutdownGraceMs: config.shutdownGraceMs,
    caughtUpThresholdMs: config.caughtUpThresholdMs,
    maxPushes: config.maxPushes,
    bulkShares: config.bulkShares,
    usageHalfLifeMs: config.usageHalfLifeMs,
    fullListingIntervalMs: config.fullListingIntervalMs,
    sshConnectionReuse: config.sshConnectionReuse,
    secureConfig: config.secureConfig ?? null,
    allowInsecureSecrets: config.allowInsecureSecrets,
    storeUmask: config.storeUmask.toString(8).padStart(3, '0'),
    maxRefNameBytes: config.maxRefNameBytes,
    refRejectionLimit: config.refRejectionLimit,
    spoolPath: config.spoolPath ?? null,
    spoolAfterMs: config.spoolAfterMs,
    retentionMs: config.retentionMs,
    httpToken: config.httpToken === undefined ? null : REDACTED,
    httpTokenFile: config.httpTokenFile ?? null,
    webhookUrls: config.webhookUrls.map(webhookReceiverName),
    defaultForceUpdate: config.defaultForceUpdate ?? false,
    // Always empty: every key refrelay accepts is honoured now; kept so scripts reading the JSON find it.
    extra: {},
    remotesDir: config.remotesDir ?? null,
    remotes: config.remotes.map(remoteToJson),
    warnings: config.warnings.map((w) => ({ file: w.file, key: w.key, message: w.message })),
  };
}

function remoteToJson(remote: RemoteConfig): Record<string, unknown> {
  return {
    name: remote.name,
    file: remote.file ?? null,
    urls: remote.urls.map(redactUrl),
    push: remote.push.map((spec) => ({ text: spec.text, force: spec.force, src: spec.src, dst: spec.dst })),
    projects: remote.projects.map((p) => ({ text: p.text, kind: p.kind })),
    excludeProjects: remote.excludeProjects.map((p) => ({ text: p.text, kind: p.kind })),
    threads: remote.threads,
    shares: remote.shares,
    replicationDelayMs: remote.replicationDelayMs,
    rescheduleDelayMs: remote.rescheduleDelayMs,
    replicationRetryMs: remote.replicationRetryMs,
    replicationMaxRetries: remote.replicationMaxRetries,
    timeoutMs: remote.timeoutMs,
    pushDeadlineMs: remote.pushDeadlineMs,
    mirror: remote.mirror,
    deletes: describeDeletes(remote),
    createMissingRepositories: remote.createMissingRepositories,
    excludedRefsPatterns: remote.excludedRefsPatterns.map((pattern) => pattern.text),
    replicatePermissions: remote.replicatePermissions,
    replicateNoteDbMetaRefs: remote.replicateNoteDbMetaRefs,
    remoteNameStyle: remote.remoteNameStyle,
    sshIdentity: remote.sshIdentity ?? null,
    sshCommand: remote.sshCommand ?? null,
    sshStrictHostKeyChecking: remote.sshStrictHostKeyChecking,
    extra: {},
    notes: basenameNotes(remote),
  };
}

function retries(count: number): string {
  return count === 0 ? '0 (retry forever)' : String(count);
}
