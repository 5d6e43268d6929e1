import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A site in `root`: replication.config (store and settings only) and the path of its fan-out
 * folder, replication/, made with `files` in it when given.
 */
export function configSite(root: string, files?: Record<string, string>): { config: string; dir: string } {
  const config = join(root, 'replication.config');
  writeFileSync(config, '[replication]\n  storePath = /tmp/refrelay-store\n');
  const dir = join(root, 'replication');
  if (files !== undefined) {
    mkdirSync(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  }
  return { config, dir };
}
