import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReplicationConfig } from '../config/types.js';
import { ConfigError } from '../errors.js';
import { findGerritQueue, gerritEventsDirMessage } from '../store/gerrit-events-dir.js';
import { nodeStoreFs } from '../store/store-fs.js';
import { STORE_MARKER_NAME, StorePaths } from '../store/store-paths.js';

/**
 * `config check` and a daemon's start refuse a storePath at the events directory of Gerrit's
 * replication plugin as a configuration problem (exit 3) when no refrelay marker is there: the
 * fix is in the config. In a marked store the same evidence (files named like the plugin's task
 * files) is only a warning, returned for the caller to print or log: anyone can drop a file named
 * `<40 hex>` into `waiting/`, and one stray file must never stop every node of a cluster.
 * Other commands meet the unmarked case when they open the store (store-marker.ts).
 */
export async function checkGerritEventsDir(config: Pick<ReplicationConfig, 'file' | 'storePath'>): Promise<string | undefined> {
  const found = await findGerritQueue(nodeStoreFs, new StorePaths(config.storePath));
  if (found === undefined) return undefined;
  const message = gerritEventsDirMessage(config.storePath, found);
  if (!(await isMarked(config.storePath))) throw new ConfigError([{ file: config.file, key: 'replication.storePath', message }]);
  return `${config.file}: replication.storePath: ${message}`;
}

async function isMarked(root: string): Promise<boolean> {
  try {
    return (await lstat(join(root, STORE_MARKER_NAME))).isFile();
  } catch {
    return false;
  }
}
