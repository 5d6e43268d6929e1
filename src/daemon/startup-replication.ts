import { nodeAliveWithinMs } from '../cluster/live-nodes.js';
import type { ReplicationConfig } from '../config/types.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { planFullSync } from '../intake/replicate.js';
import type { Log } from '../runtime/log.js';
import type { Clock } from '../runtime/clock.js';
import type { TaskStore } from '../store/task-store.js';

/**
 * replicateOnStartup: a full sync of every project, queued only by the first daemon of the
 * cluster — when no other node's heartbeat is fresh on the store's clock. Two nodes starting at
 * once may both queue it; the tasks are the same files, so that costs nothing.
 */
export async function replicateIfFirstOfCluster(
  store: Pick<TaskStore, 'readNodeRecordFiles' | 'createMany'>,
  config: ReplicationConfig,
  clock: Clock,
  storeClockOffsetMs: number,
  log: Log,
): Promise<void> {
  const storeNow = clock.now() + storeClockOffsetMs;
  const freshWithin = nodeAliveWithinMs(config);
  const peers = (await store.readNodeRecordFiles()).filter((file) => {
    const record = file.record as { nodeId?: unknown; stoppedAt?: unknown } | null;
    return record !== null && record.nodeId !== config.nodeId && typeof record.stoppedAt !== 'number' && storeNow - file.mtimeMs <= freshWithin;
  });
  if (peers.length > 0 || config.basePath === undefined) {
    log.info({ aliveNodes: peers.length }, 'replicateOnStartup: another node is running; not queueing a full sync');
    return;
  }
  const projects = await discoverProjects(config.basePath);
  const tasks = planFullSync(config, projects, { patterns: [], all: true, remotes: [], urlSubstring: undefined });
  await store.createMany(tasks);
  log.info({ projects: projects.length, tasks: tasks.length }, 'replicateOnStartup: first node of the cluster queued a full sync');
}
