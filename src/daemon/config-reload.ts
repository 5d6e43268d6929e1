import { changedConfigFiles, readConfigStamp, type ConfigStamp } from '../config/config-stamp.js';
import type { ReplicationConfig } from '../config/types.js';
import type { Log } from '../runtime/log.js';

/**
 * The config in force on a node: replaced by a valid reload (SIGHUP, autoReload), read afresh by
 * every pass and push. Kept apart from the loop so the rules of what a reload may change live in
 * one place.
 */
export class ConfigReloader {
  private config: ReplicationConfig;
  private stamp: ConfigStamp | undefined;

  constructor(
    initial: ReplicationConfig,
    private readonly log: Log,
    /** Reads the config file again; throws ConfigError when it is invalid. */
    private readonly reloadConfig: (() => ReplicationConfig) | undefined,
    /** After a valid reload: the next pass should run on the new config now, not an interval later. */
    private readonly applied: () => void,
  ) {
    this.config = initial;
  }

  get current(): ReplicationConfig {
    return this.config;
  }

  /**
   * Apply the config file as it is now. A valid one takes effect for the next pass and the next
   * push (new remotes start, removed remotes stop being scheduled); running pushes finish with the
   * settings they started with and no claim is touched. An invalid one is refused with the same
   * messages as `config check`, and the old config stays in force.
   */
  reload(reason: string, files?: readonly string[]): boolean {
    const { log, reloadConfig } = this;
    if (reloadConfig === undefined) return false;
    let next: ReplicationConfig;
    try {
      next = reloadConfig();
    } catch (error) {
      const problems = (error as { problems?: Array<{ file: string; key: string; message: string }> }).problems;
      log.error(
        { reason, problems: problems?.map((problem) => `${problem.file}: ${problem.key}: ${problem.message}`) ?? [String(error)] },
        'config reload refused: the file is invalid; the previous config stays in force',
      );
      return false;
    }
    const fixed = (['storePath', 'nodeId'] as const).filter((key) => next[key] !== this.config[key]);
    if (fixed.length > 0) {
      log.error({ reason, keys: fixed }, 'config reload refused: storePath and nodeId only change with a restart');
      return false;
    }
    const before = new Set(this.config.remotes.map((remote) => remote.name));
    const after = new Set(next.remotes.map((remote) => remote.name));
    this.config = next;
    log.info(
      {
        reason,
        ...(files === undefined ? {} : { files }),
        added: [...after].filter((name) => !before.has(name)),
        removed: [...before].filter((name) => !after.has(name)),
      },
      'config reloaded',
    );
    this.applied();
    return true;
  }

  /** With autoReload, a few stats per pass notice an edited config file or fan-out folder. */
  async reloadIfChanged(): Promise<void> {
    if (!this.config.autoReload) return;
    const stamp = await readConfigStamp(this.config.file);
    if (stamp === undefined) return;
    const before = this.stamp;
    this.stamp = stamp;
    const files = before === undefined ? [] : changedConfigFiles(before, stamp);
    if (files.length > 0) this.reload('config file changed', files);
  }
}
