import type { ReplicationConfig } from '../config/types.js';
import { ConfigError } from '../errors.js';
import { findGerritQueue, gerritEventsDirMessage } from '../store/gerrit-events-dir.js';
import { nodeStoreFs } from '../store/store-fs.js';
import { StorePaths } from '../store/store-paths.js';

/**
 * `config check` and a daemon's start refuse a storePath at the events directory of Gerrit's
 * replication plugin as a configuration problem (exit 3), marked store or not: the fix is in the
 * config. Other commands meet the unmarked case when they open the store (store-marker.ts).
 */
export async function refuseGerritEventsDir(config: Pick<ReplicationConfig, 'file' | 'storePath'>): Promise<void> {
  const found = await findGerritQueue(nodeStoreFs, new StorePaths(config.storePath));
  if (found === undefined) return;
  throw new ConfigError([{ file: config.file, key: 'replication.storePath', message: gerritEventsDirMessage(config.storePath, found) }]);
}
