import type { RefStatus } from '../push/push-types.js';
import type { ReplicationEvent } from '../schedule/events.js';

/**
 * A push result in the shape of the stream events of Gerrit's replication plugin, so that what
 * listens to Gerrit (Jenkins' gerrit-trigger, Zuul) can listen to refrelay: `type`, `project`,
 * `ref`, `targetNode`, `targetUri` and `eventCreatedOn` (seconds) as Gerrit names them.
 * `targetUri` is redacted. refrelay adds `remote` and `nodeId`, and `reason` to a failure.
 */
export type StreamEvent =
  | (RefFields & { readonly type: 'ref-replication-scheduled' })
  | (RefFields & {
      readonly type: 'ref-replicated';
      readonly status: 'succeeded' | 'failed' | 'not-attempted';
      /** JGit's `RemoteRefUpdate.Status` names, as Gerrit sends them. */
      readonly refStatus: JGitRefStatus;
      readonly reason?: string;
    })
  | (RefFields & { readonly type: 'ref-replication-done'; readonly nodesCount: number });

interface RefFields {
  readonly project: string;
  readonly ref: string;
  readonly targetNode: string;
  readonly targetUri: string;
  readonly remote: string;
  readonly nodeId: string;
  readonly eventCreatedOn: number;
}

export type JGitRefStatus = 'OK' | 'UP_TO_DATE' | 'REJECTED_NONFASTFORWARD' | 'REJECTED_NODELETE' | 'REJECTED_OTHER_REASON' | 'NOT_ATTEMPTED';

/** The host of a URI (Gerrit's deprecated `targetNode`), or the path of a local one. */
function targetNode(uri: string): string {
  try {
    const parsed = new URL(uri);
    return parsed.host === '' ? parsed.pathname : parsed.host;
  } catch {
    // scp-like `host:path`, or a local path.
    const scp = /^([^/:]+):/.exec(uri);
    return scp === null ? uri : scp[1]!.replace(/^.*@/, '');
  }
}

function refResult(status: RefStatus, detail: string | undefined): { status: 'succeeded' | 'failed' | 'not-attempted'; refStatus: JGitRefStatus } {
  switch (status) {
    case 'up-to-date':
      return { status: 'succeeded', refStatus: 'UP_TO_DATE' };
    case 'dropped':
      return { status: 'not-attempted', refStatus: 'NOT_ATTEMPTED' };
    case 'rejected':
      if (detail !== undefined && /non-fast-forward|fetch first/.test(detail)) return { status: 'failed', refStatus: 'REJECTED_NONFASTFORWARD' };
      if (detail !== undefined && /deletion prohibited|deny deleting/.test(detail)) return { status: 'failed', refStatus: 'REJECTED_NODELETE' };
      return { status: 'failed', refStatus: 'REJECTED_OTHER_REASON' };
    default:
      return { status: 'succeeded', refStatus: 'OK' };
  }
}

/**
 * The stream events of one node event: `ref-replication-scheduled` per ref as its push starts;
 * after it, `ref-replicated` per ref git answered for (every carried ref `failed` when the push
 * as a whole failed), then `ref-replication-done` per carried ref. A node pushes each destination
 * on its own, so a done event is per destination: `nodesCount` 1, `targetUri` naming it.
 */
export function streamEventsOf(event: ReplicationEvent, nodeId: string, nowMs: number): StreamEvent[] {
  if (event.type !== 'push-started' && event.type !== 'pushed') return [];
  const base = (ref: string): RefFields => ({
    project: event.project,
    ref,
    targetNode: targetNode(event.uri),
    targetUri: event.uri,
    remote: event.remote,
    nodeId,
    eventCreatedOn: Math.floor(nowMs / 1000),
  });
  if (event.type === 'push-started') return event.refs.map((ref) => ({ ...base(ref), type: 'ref-replication-scheduled' }));
  const replicated: StreamEvent[] =
    event.result === 'failed' && event.refResults.length === 0
      ? event.refs.map((ref) => ({
          ...base(ref),
          type: 'ref-replicated',
          status: 'failed',
          refStatus: 'REJECTED_OTHER_REASON',
          ...(event.failure === undefined ? {} : { reason: event.failure }),
        }))
      : event.refResults.map((result) => ({
          ...base(result.ref),
          type: 'ref-replicated',
          ...refResult(result.status, result.detail),
          ...(result.status === 'rejected' && result.detail !== undefined ? { reason: result.detail } : {}),
        }));
  const done: StreamEvent[] = event.refs.map((ref) => ({ ...base(ref), type: 'ref-replication-done', nodesCount: 1 }));
  return [...replicated, ...done];
}
