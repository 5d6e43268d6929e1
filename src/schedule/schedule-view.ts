import type { NodeSchedule } from '../observe/http-server.js';
import { redactUrl } from '../observe/redact.js';
import type { PassEntry, UriSchedule } from './due-planner.js';
import type { FairShare } from './fair-share.js';
import type { HostCircuits } from './host-circuit.js';
import type { HostPacing } from './host-pacing.js';
import type { InFlight } from './in-flight.js';

/** The distributor's state the status view reads. */
export interface ScheduleState {
  readonly now: number;
  readonly maxPushes: number;
  readonly pushing: number;
  readonly lastPass: readonly PassEntry[];
  readonly inFlight: ReadonlyMap<string, Pick<InFlight, 'group' | 'startedAt'>>;
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
  for (const { group, at } of state.lastPass) {
    listed.add(group.uriKey);
    const job = state.inFlight.get(group.uriKey);
    const notBefore = state.schedules.get(group.uriKey)?.notBefore ?? 0;
    uris.push({
      uri: redactUrl(group.uri),
      remote: group.remote.name,
      lane: group.lane,
      waiting: group.tasks.length,
      nextDueInMs: job === undefined ? at - now : null,
      backoffUntilMs: notBefore > now ? notBefore - now : null,
      running: job !== undefined,
      runningForMs: job === undefined ? null : now - job.startedAt,
    });
  }
  for (const job of state.inFlight.values()) {
    if (listed.has(job.group.uriKey)) continue;
    uris.push({ uri: redactUrl(job.group.uri), remote: job.group.remote.name, lane: job.group.lane, waiting: 0, nextDueInMs: null, backoffUntilMs: null, running: true, runningForMs: now - job.startedAt });
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
