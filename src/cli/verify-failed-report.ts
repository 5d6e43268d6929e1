import type { ReplicationConfig } from '../config/types.js';
import { describeFailedInSync, failedBefore, failedNowInSync } from '../intake/verify-failed.js';
import type { DriftReport } from '../intake/verify.js';
import type { Destination } from '../intake/plan-tasks.js';
import { TaskStore } from '../store/task-store.js';
import { operatorName } from './operator.js';

/** What verify adds about failed/: lines for people, entries for `--json`. */
export interface FailedInSyncReport {
  readonly lines: readonly string[];
  readonly json: ReadonlyArray<{ remote: string; uri: string; taskKeys: string[]; dropped: boolean }>;
}

/**
 * Failed tasks whose refs verify found in sync: named per destination, or with `fix` dropped
 * through the same store code as `failed drop`, recorded as dropped by verify. verify ran without
 * the store before; a store it cannot read is said on stderr and changes nothing else.
 */
export async function reportFailedInSync(
  config: ReplicationConfig,
  destinations: readonly Destination[],
  reports: readonly DriftReport[],
  fix: boolean,
  readBefore: number,
): Promise<FailedInSyncReport> {
  try {
    const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
    const found = failedNowInSync(await store.listFailed(), destinations, reports, readBefore);
    if (found.length === 0) return { lines: [], json: [] };
    let dropped: ReadonlySet<string> | undefined;
    if (fix) {
      const chosen = new Set(found.flatMap((group) => group.tasks.map((item) => `${item.uriKey}/${item.name}`)));
      // Checked again on the drop's own listing: the same task may have failed anew since (its name carries no commit).
      const outcome = await store.dropFailed((item) => chosen.has(`${item.uriKey}/${item.name}`) && failedBefore(item, readBefore), {
        by: operatorName(),
        via: 'verify',
        nodeId: config.nodeId,
      });
      dropped = new Set(outcome.dropped.map((item) => `${item.uriKey}/${item.name}`));
    }
    return {
      lines: found.map((group) =>
        describeFailedInSync(group, dropped === undefined ? undefined : group.tasks.filter((item) => dropped.has(`${item.uriKey}/${item.name}`)).length),
      ),
      json: found.map((group) => ({ remote: group.remote, uri: group.uri, taskKeys: group.tasks.map((item) => item.key), dropped: dropped !== undefined })),
    };
  } catch (error) {
    process.stderr.write(`refrelay: verify: failed tasks not checked: ${error instanceof Error ? error.message : String(error)}\n`);
    return { lines: [], json: [] };
  }
}
