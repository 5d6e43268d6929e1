import { redactUrl } from '../runtime/redact.js';
import type { Due, UriSchedule } from './due-planner.js';
import type { FairGroupView, FairShare, Lane } from './fair-share.js';
import type { HostCircuits, HostCircuitView } from './host-circuit.js';
import type { HostPaceView, HostPacing } from './host-pacing.js';
import type { JobTable } from './job-table.js';

/** This node's in-memory view: what only the node itself knows (schedule, running pushes). */
export interface NodeSchedule {
  readonly nodeId: string;
  /** `replication.maxPushes`, and the git pushes running now. */
  readonly maxPushes?: number;
  readonly pushing?: number;
  readonly uris: ReadonlyArray<{
    uri: string;
    remote: string;
    lane?: Lane;
    waiting: number;
    nextDueInMs: number | null;
    backoffUntilMs: number | null;
    running: boolean;
    runningForMs: number | null;
  }>;
  /** Decayed push time per fair-share group (`live`, `bulk`, `live/REMOTE`, …). */
  readonly fairShare?: ReadonlyArray<FairGroupView>;
  /** Destination hosts with connection failures or an open circuit, as this node sees them. */
  readonly circuits?: ReadonlyArray<HostCircuitView & { nextProbeInMs: number | null }>;
  /** Hosts that signalled overload: concurrent pushes allowed, spacing between starts, Retry-After left. */
  readonly pacedHosts?: ReadonlyArray<HostPaceView>;
}

/** What the status view is built from: the last pass's plan, the job table, the URI schedules. */
export interface ScheduleState {
  readonly now: number;
  readonly maxPushes: number;
  readonly pushing: number;
  /** Every waiting URI of the last pass's plan (DuePlan.waiting). */
  readonly waiting: readonly Due[];
  readonly jobs: JobTable;
  readonly schedules: ReadonlyMap<string, UriSchedule>;
  readonly fairShare: Pick<FairShare, 'view'>;
  readonly circuits: Pick<HostCircuits, 'view'>;
  readonly pacing: Pick<HostPacing, 'view'>;
}

/** What a node plans, as of its last pass: next push per URI, backoff, running pushes. */
export function nodeSchedule(nodeId: string, state: ScheduleState): NodeSchedule {
  const { now } = state;
  const uris: Array<NodeSchedule['uris'][number]> = [];
  const listed = new Set<string>();
  for (const { group, at } of state.waiting) {
    listed.add(group.uriKey);
    const job = state.jobs.get(group.uriKey);
    const notBefore = state.schedules.get(group.uriKey)?.notBefore ?? 0;
    uris.push({
      uri: redactUrl(group.uri),
      remote: group.remote.name,
      lane: group.lane,
      waiting: group.taskCount,
      nextDueInMs: job === undefined ? at - now : null,
      backoffUntilMs: notBefore > now ? notBefore - now : null,
      running: job !== undefined,
      runningForMs: job === undefined ? null : now - job.startedAt,
    });
  }
  for (const job of state.jobs.values()) {
    if (listed.has(job.group.uriKey)) continue;
    uris.push({
      uri: redactUrl(job.group.uri),
      remote: job.group.remote.name,
      lane: job.group.lane,
      waiting: 0,
      nextDueInMs: null,
      backoffUntilMs: null,
      running: true,
      runningForMs: now - job.startedAt,
    });
  }
  uris.sort((a, b) => Number(b.running) - Number(a.running) || (a.nextDueInMs ?? 0) - (b.nextDueInMs ?? 0));
  return {
    nodeId,
    maxPushes: state.maxPushes,
    pushing: state.pushing,
    uris,
    fairShare: state.fairShare.view(),
    circuits: state.circuits.view().map((view) => ({ ...view, nextProbeInMs: view.nextProbeAt === null ? null : Math.max(0, view.nextProbeAt - now) })),
    pacedHosts: state.pacing.view(),
  };
}
