import type { ConfigProblem } from '../errors.js';

export type RemoteNameStyle = 'slash' | 'dash' | 'underscore' | 'basenameOnly';

/** One push refspec: `[+]src:dst`, where src and dst may end in one `*`. */
export interface Refspec {
  readonly force: boolean;
  readonly src: string;
  readonly dst: string;
  /** The text as written in the config, for display. */
  readonly text: string;
}

/** A regular expression from the config, in Java's syntax, matched against whole names. */
export interface JavaRegex {
  /** As written in the config, for display. */
  readonly text: string;
  matches(input: string): boolean;
}

/** A `projects` / `excludeProjects` entry: exact name, `prefix/*` (trailing `*`), or `^regex`. */
export interface ProjectPattern {
  readonly text: string;
  readonly kind: 'exact' | 'prefix' | 'regex';
  matches(project: string): boolean;
}

export interface RemoteConfig {
  readonly name: string;
  /** Absolute path of the file the remote was read from: the config file, or its fan-out file. */
  readonly file?: string;
  /** URL templates as written; `${name}` stands for the project. */
  readonly urls: readonly string[];
  readonly push: readonly Refspec[];
  readonly projects: readonly ProjectPattern[];
  readonly excludeProjects: readonly ProjectPattern[];
  readonly threads: number;
  readonly replicationDelayMs: number;
  readonly rescheduleDelayMs: number;
  readonly replicationRetryMs: number;
  /** 0 = retry forever. */
  readonly replicationMaxRetries: number;
  /** Gerrit's transport timeout: a push is stopped after this long without progress from git; 0 = none. */
  readonly timeoutMs: number;
  /** Hard wall-clock deadline of one whole push; 0 = none. */
  readonly pushDeadlineMs: number;
  readonly mirror: boolean;
  readonly createMissingRepositories: boolean;
  /** Java regular expressions matched against the whole ref name, as Gerrit does. */
  readonly excludedRefsPatterns: readonly JavaRegex[];
  /** `refs/meta/config` (a project's access rights) is replicated; false leaves it out (`config/ref-exclusion.ts`). */
  readonly replicatePermissions: boolean;
  /** NoteDb meta refs (Gerrit's `RefNames.isNoteDbMetaRef`) are replicated; false leaves them out. */
  readonly replicateNoteDbMetaRefs: boolean;
  readonly remoteNameStyle: RemoteNameStyle;
  /** Weight of this remote against the others of its lane in the fair share (1–1000). */
  readonly shares: number;
  /** An ssh private key for this remote's ssh URLs (absolute), passed as `-i` with IdentitiesOnly. */
  readonly sshIdentity?: string;
  /** The ssh program and its own options, as a shell snippet (like GIT_SSH_COMMAND); refrelay appends its options. */
  readonly sshCommand?: string;
  /** `yes`: the host key must already be known; `accept-new`: a first key is recorded, a changed one refused. */
  readonly sshStrictHostKeyChecking: 'yes' | 'accept-new';
}

/** Where a relative `storePath` / `eventsDirectory` was taken from, for `config check`. */
export interface StorePathOrigin {
  readonly key: 'storePath' | 'eventsDirectory';
  /** The path as written. */
  readonly written: string;
  /** The folder it was resolved against. */
  readonly relativeTo: string;
  /** `relativeTo` is the Gerrit site holding the config file's `etc/` folder. */
  readonly gerritSite: boolean;
}

export interface ReplicationConfig {
  /** Absolute path of the file this came from. */
  readonly file: string;
  readonly storePath: string;
  /** Present when storePath was written relative. */
  readonly storePathFrom?: StorePathOrigin;
  /** Local repositories live at `<basePath>/<project>.git`; undefined when not set. */
  readonly basePath: string | undefined;
  readonly nodeId: string;
  readonly distributionIntervalMs: number;
  readonly randomDelayMs: number;
  readonly lockStaleMs: number;
  /** 0 = retry forever. */
  readonly maxRetries: number;
  /** `host:port`, or `off`. */
  readonly httpListen: string;
  /** How long a stopping node waits for running pushes before abandoning them to recovery. */
  readonly shutdownGraceMs: number;
  /** Watch basePath repositories for ref changes (for servers without hooks). */
  readonly watchRepositories: boolean;
  /** The watcher refuses to start beyond this many repositories. */
  readonly watchRepositoriesLimit: number;
  /** Run `verify` periodically on one node at a time; 0 = off. */
  readonly verifyIntervalMs: number;
  /** Apply an edited config without a restart. */
  readonly autoReload: boolean;
  /** Queue a full sync of every project when the first daemon of the cluster starts. */
  readonly replicateOnStartup: boolean;
  /** `/readyz` answers 503 while a waiting task is older than this. */
  readonly caughtUpThresholdMs: number;
  /** Required by mutating HTTP requests off loopback. A secret: never print it. */
  readonly httpToken?: string;
  /** A file holding the token (read when the daemon starts and on reload), absolute. */
  readonly httpTokenFile?: string;
  /** Receivers of this node's stream events as JSON POSTs (`webhookUrl`, repeatable); the HMAC secret is in secure.config. */
  readonly webhookUrls: readonly string[];
  /** Node-wide cap on concurrent git pushes, on top of each remote's `threads`. */
  readonly maxPushes: number;
  /** Weight of the bulk lane (full syncs) against the live lane's 100 (1–1000). */
  readonly bulkShares: number;
  /** The fair share's memory: push time counts half after this long. */
  readonly usageHalfLifeMs: number;
  /** `waiting/` is listed in full at least this often, changed or not: NFS attribute caches may be stale. */
  readonly fullListingIntervalMs: number;
  /** One ssh master connection per destination host, shared by the node's pushes. */
  readonly sshConnectionReuse: boolean;
  /**
   * Credentials file (git-config syntax, `[remote "NAME"] username/password`), absolute; undefined
   * when not set and no `secure.config` sits next to the config file. Its values never enter this object.
   */
  readonly secureConfig?: string;
  /** Accept a secure.config that group or others may read. */
  readonly allowInsecureSecrets: boolean;
  /** The umask for everything refrelay writes into the store (default 027: files 0640, folders 0750). */
  readonly storeUmask: number;
  /** Ref names longer than this many UTF-8 bytes are refused where they enter and in task files. */
  readonly maxRefNameBytes: number;
  /**
   * A ref refused this many pushes in a row with the same transient-looking reason, while other refs
   * of those pushes landed, is parked in failed/ instead of being retried again.
   */
  readonly refRejectionLimit: number;
  /**
   * Local folder for updates `enqueue` cannot write to the store (absolute); undefined = the
   * default for the user who runs it (`config/spool-path.ts`), resolved where the process is known.
   */
  readonly spoolPath?: string;
  /** A store write `enqueue` still waits on after this long is spooled instead. */
  readonly spoolAfterMs: number;
  /** Dropped failed tasks (failed/dropped/) are deleted by the daemons after this long; 0: at their next sweep. */
  readonly retentionMs: number;
  readonly remotes: readonly RemoteConfig[];
  /**
   * The fan-out folder (`replication/` beside the config file) when it exists: the remotes come
   * only from its `*.config` files then, and those of the config file are ignored, as in Gerrit.
   */
  readonly remotesDir?: string;
  /** Keys accepted but not honoured (Gerrit-only settings), one entry each. */
  readonly warnings: readonly ConfigProblem[];
  /** `gerrit.defaultForceUpdate`: the default push refspec is `+refs/*:refs/*`. */
  readonly defaultForceUpdate?: boolean;
}
