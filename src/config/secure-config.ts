import { statSync } from 'node:fs';
import { inspect } from 'node:util';
import { ConfigError, type ConfigProblem } from '../errors.js';
import { errnoName } from '../runtime/errno.js';
import { readGitConfig } from './git-config-reader.js';
import type { ReplicationConfig } from './types.js';

export interface RemoteCredentials {
  readonly username?: string;
  readonly password?: string;
}

const HIDDEN = '[credentials hidden]';

/**
 * HTTP(S) credentials per remote, from `secure.config` (Gerrit's format:
 * `[remote "NAME"] username = … password = …`). Kept apart from the config object, which is
 * printed by `config check`; printing or logging this one shows no value.
 */
export class Credentials {
  static readonly none = new Credentials(new Map());

  private constructor(private readonly byRemote: ReadonlyMap<string, RemoteCredentials>) {}

  /** Exported for tests and for callers that built the map themselves. */
  static of(entries: Iterable<[string, RemoteCredentials]>): Credentials {
    return new Credentials(new Map(entries));
  }

  for(remote: string): RemoteCredentials | undefined {
    return this.byRemote.get(remote);
  }

  /** Remote names that have credentials, for `config check`. */
  get remotes(): string[] {
    return [...this.byRemote.keys()].sort();
  }

  toJSON(): string {
    return HIDDEN;
  }

  toString(): string {
    return HIDDEN;
  }

  [inspect.custom](): string {
    return HIDDEN;
  }
}

/**
 * Reads `replication.secureConfig`. Refuses a file that group or others may read or write (a
 * clear ConfigError, exit 3) unless `replication.allowInsecureSecrets`. Problems name the file
 * and the key, never a value.
 */
export function loadCredentials(config: Pick<ReplicationConfig, 'secureConfig' | 'allowInsecureSecrets'>): Credentials {
  return loadSecrets(config).credentials;
}

/** What `secure.config` holds: credentials per remote, and `[replication] webhookSecret`, the key that signs webhook bodies. */
export interface Secrets {
  readonly credentials: Credentials;
  readonly webhookSecret?: string;
}

/** Reads `replication.secureConfig` once, with the checks of loadCredentials. */
export function loadSecrets(config: Pick<ReplicationConfig, 'secureConfig' | 'allowInsecureSecrets'>): Secrets {
  const file = config.secureConfig;
  if (file === undefined) return { credentials: Credentials.none };
  const problem = (key: string, message: string): ConfigError => new ConfigError([{ file, key, message } satisfies ConfigProblem]);
  let mode: number;
  try {
    const stats = statSync(file);
    if (!stats.isFile()) throw problem('replication.secureConfig', 'is not a file');
    mode = stats.mode & 0o777;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = errnoName(error) ?? 'error';
    throw problem('replication.secureConfig', code === 'ENOENT' ? 'does not exist' : `cannot be read (${code})`);
  }
  if ((mode & 0o077) !== 0 && !config.allowInsecureSecrets) {
    throw problem(
      'replication.secureConfig',
      `holds passwords but group or others may access it (mode ${mode.toString(8).padStart(4, '0')}): run chmod 600 on it, or set replication.allowInsecureSecrets = true`,
    );
  }
  const read = readGitConfig(file);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  const byRemote = new Map<string, { username?: string; password?: string }>();
  let webhookSecret: string | undefined;
  for (const entry of read.entries) {
    if (entry.section === 'replication' && entry.subsection === undefined && entry.name === 'webhooksecret' && entry.value.trim() !== '')
      webhookSecret = entry.value.trim();
    if (entry.section !== 'remote' || entry.subsection === undefined) continue;
    if (entry.name !== 'username' && entry.name !== 'password') continue;
    const credentials = byRemote.get(entry.subsection) ?? {};
    credentials[entry.name] = entry.value;
    byRemote.set(entry.subsection, credentials);
  }
  return { credentials: Credentials.of(byRemote), ...(webhookSecret === undefined ? {} : { webhookSecret }) };
}
