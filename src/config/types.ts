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

/** A `projects` / `excludeProjects` entry: exact name, `prefix/*` (trailing `*`), or `^regex`. */
export interface ProjectPattern {
  readonly text: string;
  readonly kind: 'exact' | 'prefix' | 'regex';
  matches(project: string): boolean;
}

export interface RemoteConfig {
  readonly name: string;
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
  /** Hard wall-clock deadline of one push; 0 = none. */
  readonly timeoutMs: number;
  readonly mirror: boolean;
  readonly createMissingRepositories: boolean;
  readonly excludedRefsPatterns: readonly RegExp[];
  readonly remoteNameStyle: RemoteNameStyle;
}

export interface ReplicationConfig {
  /** Absolute path of the file this came from. */
  readonly file: string;
  readonly storePath: string;
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
  readonly remotes: readonly RemoteConfig[];
  /** Keys accepted but not honoured (Gerrit-only settings), one entry each. */
  readonly warnings: readonly ConfigProblem[];
}
