/**
 * Every key refrelay knows, per section, in canonical camelCase. git hands us
 * names lower-cased, so lookups go through `canonicalKey`.
 */

/** Keys refrelay honours now. */
export const REPLICATION_KEYS = [
  'storePath',
  'eventsDirectory',
  'basePath',
  'nodeId',
  'distributionInterval',
  'randomDelay',
  'lockStale',
  'maxRetries',
  'httpListen',
  'shutdownGrace',
  'watchRepositories',
  'watchRepositoriesLimit',
  'verifyInterval',
  'autoReload',
  'replicateOnStartup',
  'caughtUpThreshold',
  'httpToken',
  'httpTokenFile',
  'webhookUrl',
  'maxPushes',
  'bulkShares',
  'usageHalfLife',
  'fullListingInterval',
  'sshConnectionReuse',
  'secureConfig',
  'allowInsecureSecrets',
  'storeUmask',
  'maxRefNameBytes',
  'refRejectionLimit',
  'spoolPath',
  'spoolAfter',
  'retention',
] as const;

export const REMOTE_KEYS = [
  'url',
  'push',
  'projects',
  'excludeProjects',
  'threads',
  'replicationDelay',
  'rescheduleDelay',
  'replicationRetry',
  'replicationMaxRetries',
  'timeout',
  'mirror',
  'createMissingRepositories',
  'excludedRefsPattern',
  'remoteNameStyle',
  'shares',
  'sshIdentity',
  'sshCommand',
  'sshStrictHostKeyChecking',
  'pushDeadline',
  // Never pushed with: a remote that has it is skipped, as Gerrit skips it (push-targets.ts).
  'fetch',
  'replicatePermissions',
  'replicateNoteDbMetaRefs',
] as const;

export const GERRIT_KEYS = ['defaultForceUpdate', 'autoReload', 'replicateOnStartup'] as const;

const CREDENTIALS = 'credentials belong in secure.config, not replication.config; this value is ignored';
const NO_BATCHING = 'refrelay sends all refs for one URI in a single push; batch size is not configurable';

/**
 * Gerrit-only keys: accepted so a Gerrit replication.config loads unchanged,
 * with one warning each saying why refrelay cannot honour them.
 */
export const REMOTE_GERRIT_ONLY: Readonly<Record<string, string>> = {
  authGroup: 'Gerrit access groups do not exist outside Gerrit; all refs matched by push are replicated',
  // refrelay cannot see Gerrit's project state or project deletions, so these two stay warnings.
  replicateHiddenProjects: 'refrelay cannot see which projects Gerrit hides: hidden projects ARE replicated unless projects/excludeProjects leave them out',
  replicateProjectDeletions: 'project deletions are not replicated: refrelay never deletes a destination repository; delete it by hand',
  adminUrl: 'refrelay has no admin API; it never creates, deletes or re-points HEAD through a separate URL',
  receivepack: 'the remote git-receive-pack path is not configurable; the destination default is used',
  uploadpack: 'refrelay only pushes, so the remote git-upload-pack path is never used',
  gitPath: 'refrelay runs no git commands on destination hosts over SSH',
  storeRefLog: 'refrelay does not configure reflogs on destination repositories',
  drainQueueAttempts: 'tasks are persisted in storePath and survive a stop, so there is no in-memory queue to drain',
  slowLatencyThreshold: 'refrelay has no per-project slow-push metric; use the push duration metrics',
  pushBatchSize: NO_BATCHING,
  username: CREDENTIALS,
  password: CREDENTIALS,
};

/**
 * Keys of a plain git remote that Gerrit reads into JGit's RemoteConfig and never uses for its
 * pushes: accepted with one warning each, like the Gerrit-only keys.
 */
export const REMOTE_GIT_ONLY: Readonly<Record<string, string>> = {
  pushurl: 'ignored: Gerrit pushes to url only and never reads pushurl, nor does refrelay; write the address as url to push there',
  tagOpt: 'ignored: tagOpt only changes what git fetch takes; refrelay only pushes, and the push refspecs decide which tags go',
};

export const REPLICATION_GERRIT_ONLY: Readonly<Record<string, string>> = {
  lockErrorMaxRetries: 'refrelay retries every transient failure under replicationRetry and maxRetries',
  updateRefErrorMaxRetries: 'refrelay retries every transient failure under replicationRetry and maxRetries',
  rsyncPath: 'refrelay has no repair --copy-packs command, so it never runs rsync',
};

export const GERRIT_GERRIT_ONLY: Readonly<Record<string, string>> = {
  maxRefsToLog: 'refrelay has no replication_log; its structured logs are not limited by this setting',
  maxRefsToShow: 'refrelay has no show-queue; refrelay status is not limited by this setting',
  pushBatchSize: NO_BATCHING,
  sshCommandTimeout: 'refrelay runs no admin SSH commands; remote.NAME.timeout and pushDeadline bound a push',
  sshConnectionTimeout: 'set ConnectTimeout in ~/.ssh/config or in remote.NAME.sshCommand instead',
  useLegacyCredentials: 'refrelay has no legacy credential store; credentials belong in secure.config',
};

export interface SectionKeys {
  readonly honoured: readonly string[];
  readonly gerritOnly: Readonly<Record<string, string>>;
}

export const SECTION_KEYS: Readonly<Record<'replication' | 'remote' | 'gerrit', SectionKeys>> = {
  replication: { honoured: REPLICATION_KEYS, gerritOnly: REPLICATION_GERRIT_ONLY },
  remote: { honoured: REMOTE_KEYS, gerritOnly: { ...REMOTE_GERRIT_ONLY, ...REMOTE_GIT_ONLY } },
  gerrit: { honoured: GERRIT_KEYS, gerritOnly: GERRIT_GERRIT_ONLY },
};

export type KnownSection = keyof typeof SECTION_KEYS;

export function isKnownSection(section: string): section is KnownSection {
  return Object.hasOwn(SECTION_KEYS, section);
}

export function allKeys(keys: SectionKeys): string[] {
  return [...keys.honoured, ...Object.keys(keys.gerritOnly)];
}

/** The camelCase spelling of a lower-cased git key name, or undefined when unknown. */
export function canonicalKey(keys: SectionKeys, lowerName: string): string | undefined {
  return allKeys(keys).find((key) => key.toLowerCase() === lowerName);
}
