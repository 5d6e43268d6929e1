import { nodeAliveWithinMs } from '../cluster/live-nodes.js';
import { measureStoreClockOffset } from '../cluster/clock-probe.js';
import type { ReplicationConfig } from '../config/types.js';
import { StoreError } from '../errors.js';
import { formatAge } from '../observe/time-text.js';
import type { Clock } from '../runtime/clock.js';
import { isGone } from '../runtime/errno.js';
import { quoteUntrusted } from '../task/names.js';
import { upgradeLayout, type LayoutUpgrade } from '../store/layout-upgrade.js';
import { storeContext, type StoreContext } from '../store/store-context.js';
import { STORE_FORMAT, inspectStore } from '../store/store-marker.js';
import { readNodeRecordFiles } from '../store/store-records.js';
import type { NodeRecordFile } from '../store/store-types.js';
import { plural } from '../runtime/plural.js';

/** Entries left alone that the report names; the rest are counted. */
const NAMED_LEFT = 10;

/** `init --upgrade` found nodes that may still be running on the store. */
export class NodesRunningError extends StoreError {
  constructor(root: string, running: readonly { nodeId: string; ageMs: number }[], aliveForMs: number) {
    const named = running.map(({ nodeId, ageMs }) => `${nodeId} (last beat ${formatAge(ageMs)} ago)`).join(', ');
    super(
      `refusing to upgrade the store at ${root}: nodes are running on it: ${named}. Stop every node first ` +
        `(a node counts as running until its record in nodes/ is ${formatAge(aliveForMs)} old, ` +
        '3 × distributionInterval + lockStale), or pass --force if they are stopped',
    );
  }
}

/**
 * `refrelay init --upgrade`: moves the store to this refrelay's layout (store/layout-upgrade.ts)
 * and returns what to print. Every node must be stopped: a node of the earlier version would
 * go on writing flat task files and never see the folders. A node counts as running while its
 * heartbeat is as fresh as `status` calls alive, on the store's clock, unless its record says it
 * stopped; `force` skips that check (records of nodes killed a moment ago).
 */
export async function initUpgrade(config: ReplicationConfig, clock: Clock, options: { readonly force: boolean }): Promise<string> {
  const ctx = storeContext({ root: config.storePath, nodeId: config.nodeId, clock });
  const state = await inspectStore(ctx);
  const needed = state.kind === 'earlier' || (state.kind === 'marked' && state.marker.format < STORE_FORMAT);
  if (needed && !options.force) await refuseWhileNodesRun(ctx, config);
  return describeUpgrade(config.storePath, await upgradeLayout(ctx));
}

async function refuseWhileNodesRun(ctx: StoreContext, config: ReplicationConfig): Promise<void> {
  // A store that cannot be probed (read-only) fails the upgrade anyway; the local clock then judges.
  const offsetMs = await measureStoreClockOffset(ctx.paths.nodes, `init-${process.pid}`, ctx.clock).catch(() => 0);
  const aliveForMs = nodeAliveWithinMs(config);
  const running = runningNodes(await nodeRecords(ctx), ctx.clock.now() + offsetMs, aliveForMs);
  if (running.length > 0) throw new NodesRunningError(ctx.paths.root, running, aliveForMs);
}

/** Node ids whose record was replaced within `aliveForMs` of store time and does not say the node stopped. Pure. */
export function runningNodes(files: readonly NodeRecordFile[], storeNowMs: number, aliveForMs: number): { nodeId: string; ageMs: number }[] {
  return files.flatMap((file) => {
    const record = file.record as { nodeId?: unknown; stoppedAt?: unknown } | null;
    if (record === null || typeof record !== 'object' || typeof record.nodeId !== 'string' || typeof record.stoppedAt === 'number') return [];
    const ageMs = Math.max(0, storeNowMs - file.mtimeMs);
    return ageMs <= aliveForMs ? [{ nodeId: record.nodeId, ageMs }] : [];
  });
}

async function nodeRecords(ctx: StoreContext): Promise<NodeRecordFile[]> {
  try {
    return await readNodeRecordFiles(ctx);
  } catch (error) {
    // An earlier refrelay's store without nodes/: no node ever beat there.
    if (error instanceof StoreError && isGone(error.cause)) return [];
    throw error;
  }
}

export function describeUpgrade(root: string, upgrade: LayoutUpgrade): string {
  if (!upgrade.upgraded) return `the store at ${root} is already at layout ${STORE_FORMAT}; nothing to do\n`;
  const tasks = upgrade.moved === 1 ? '1 task moved into its URI folder' : `${upgrade.moved} tasks moved into their URI folders`;
  const lines = [
    upgrade.from === 'unmarked'
      ? `adopted the earlier refrelay store at ${root} as layout ${STORE_FORMAT}: ${tasks}`
      : `upgraded the store at ${root} to layout ${STORE_FORMAT}: ${tasks}`,
  ];
  if (upgrade.duplicates > 0) lines.push(`${plural(upgrade.duplicates, 'task file')} queued twice: the copy with the older time kept`);
  if (upgrade.quarantined > 0) lines.push(`${plural(upgrade.quarantined, 'unreadable task file')} moved to ref-updates/corrupt/`);
  if (upgrade.left.length > 0) {
    // Names in the store are anyone's: quoted, so a control character cannot reach the terminal.
    const named = upgrade.left.slice(0, NAMED_LEFT).map((entry) => `${quoteUntrusted(entry.name)} (${entry.reason})`);
    if (upgrade.left.length > NAMED_LEFT) named.push(`${upgrade.left.length - NAMED_LEFT} more`);
    lines.push(`left alone in ref-updates/waiting/: ${named.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}
