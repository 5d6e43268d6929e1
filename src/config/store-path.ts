import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { lastValue, type Reporter, type SectionValues } from './collect-sections.js';
import { parsePath } from './config-values.js';
import type { StorePathOrigin } from './types.js';

export const MISSING_STORE_PATH =
  "not set, nor eventsDirectory. Gerrit then keeps its queue in the plugin's data folder, one per primary; " +
  'refrelay nodes share one store, and refrelay cannot guess a folder they all mount. Add under [replication]: ' +
  'storePath = /mnt/shared/refrelay (a folder every node mounts)';

export interface ResolvedStorePath {
  /** Absolute; '' when a problem was reported. */
  readonly storePath: string;
  /** Present when the path was written relative. */
  readonly storePathFrom?: StorePathOrigin;
}

/**
 * `storePath`, else Gerrit's `eventsDirectory`, made absolute. A relative `storePath` follows the
 * config file's folder, like refrelay's other paths. A relative `eventsDirectory` follows the
 * folder Gerrit takes it from (`SitePaths.resolve`): the Gerrit site, when the file sits in a
 * site's `etc/`; otherwise the config file's folder. An empty `eventsDirectory` is unset, as in
 * Gerrit (`Strings.isNullOrEmpty`).
 */
export function resolveStorePath(replication: SectionValues, absoluteFile: string, report: Reporter): ResolvedStorePath {
  const configDir = dirname(absoluteFile);
  const storePath = lastValue(replication, 'storePath');
  if (storePath !== undefined) return resolveSetting('storePath', storePath, configDir, false, report);
  const eventsDirectory = lastValue(replication, 'eventsDirectory');
  if (eventsDirectory !== undefined && eventsDirectory.trim() !== '') {
    const site = gerritSiteOf(configDir);
    return resolveSetting('eventsDirectory', eventsDirectory, site ?? configDir, site !== undefined, report);
  }
  report.problem('replication.storePath', MISSING_STORE_PATH);
  return { storePath: '' };
}

/**
 * The Gerrit site a config folder belongs to: the parent of a folder named `etc`, as in
 * `$site_path/etc/replication.config`. The system's own `/etc` is no Gerrit site.
 */
export function gerritSiteOf(configDir: string): string | undefined {
  if (basename(configDir) !== 'etc') return undefined;
  const site = dirname(configDir);
  return dirname(site) === site ? undefined : site;
}

function resolveSetting(key: StorePathOrigin['key'], text: string, base: string, gerritSite: boolean, report: Reporter): ResolvedStorePath {
  const parsed = parsePath(text);
  if (!parsed.ok) {
    report.problem(`replication.${key}`, parsed.message);
    return { storePath: '' };
  }
  const storePath = resolve(base, parsed.value);
  // An absolute path needs no explanation in `config check`.
  if (isAbsolute(parsed.value)) return { storePath };
  return { storePath, storePathFrom: { key, written: parsed.value, relativeTo: base, gerritSite } };
}
