import { homedir, hostname } from 'node:os';
import { parseNodeId } from '../config/config-values.js';
import { findConfigFile, loadConfig } from '../config/load-config.js';
import { UsageError } from '../errors.js';
import { spoolPathFor } from '../config/spool-path.js';
import type { ReplicationConfig } from '../config/types.js';

export interface CliConfigOptions {
  readonly config?: string | undefined;
  readonly nodeId?: string | undefined;
}

/**
 * Config lookup order: --config, then $REFRELAY_CONFIG, then ./replication.config. Every command
 * that works on the store loads its config here, so this is where the process takes the store's
 * umask (`replication.storeUmask`): task files 0640 and folders 0750 by default.
 */
export function loadCliConfig(options: CliConfigOptions): ReplicationConfig {
  const file = findConfigFile({ flag: options.config, env: process.env, cwd: process.cwd() });
  const config = loadConfig({ file, hostname: hostname() });
  process.umask(config.storeUmask);
  if (options.nodeId === undefined || options.nodeId === '') return config;
  // The id names files in the store (nodes/<id>.json, history/<id>.json): checked as the config's own.
  const nodeId = parseNodeId(options.nodeId);
  if (!nodeId.ok) throw new UsageError(`--node-id: ${nodeId.message}`);
  return Object.freeze({ ...config, nodeId: nodeId.value });
}

/** `replication.spoolPath`, or the default for the user running this process (`enqueue` and `daemon` alike). */
export function localSpoolPath(configured: string | undefined): string {
  return spoolPathFor(configured, { xdgStateHome: process.env.XDG_STATE_HOME, root: process.getuid?.() === 0, home: homedir() });
}
