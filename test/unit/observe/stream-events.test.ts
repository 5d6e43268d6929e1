import { describe, expect, it } from 'vitest';
import type { ReplicationEvent } from '../../../src/schedule/events.js';
import { streamEventsOf } from '../../../src/observe/stream-events.js';

const AT = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
const common = { remote: 'dr', uri: 'https://bot:***@git.example.org/app.git', uriKey: 'k', project: 'app' };
const fields = {
  project: 'app',
  targetNode: 'git.example.org',
  targetUri: 'https://bot:***@git.example.org/app.git',
  remote: 'dr',
  nodeId: 'n1',
  eventCreatedOn: Math.floor(AT / 1000),
};

function pushed(over: Partial<Extract<ReplicationEvent, { type: 'pushed' }>>): ReplicationEvent {
  return {
    type: 'pushed',
    pushId: 'l.1',
    ...common,
    refs: ['refs/heads/main', 'refs/heads/blocked'],
    refResults: [],
    outcomes: {},
    durationMs: 10,
    result: 'ok',
    oldestQueuedAtMs: 0,
    ...over,
  };
}

describe('stream events in the shape of Gerrit replication events', () => {
  it('a push that starts: ref-replication-scheduled per ref', () => {
    expect(streamEventsOf({ type: 'push-started', ...common, refs: ['refs/heads/main'] }, 'n1', AT)).toEqual([
      { type: 'ref-replication-scheduled', ref: 'refs/heads/main', ...fields },
    ]);
  });

  it('a push with a rejected ref: ref-replicated per ref with status and refStatus, then ref-replication-done per ref', () => {
    const event = pushed({
      result: 'partial',
      refResults: [
        { ref: 'refs/heads/main', status: 'updated' },
        { ref: 'refs/heads/blocked', status: 'rejected', detail: 'hook declined' },
        { ref: 'refs/heads/old', status: 'up-to-date' },
        { ref: 'refs/heads/ff', status: 'rejected', detail: 'non-fast-forward' },
        { ref: 'refs/heads/gone', status: 'rejected', detail: 'deletion prohibited' },
      ],
    });
    expect(
      streamEventsOf(event, 'n1', AT).map((e) => [
        e.type,
        e.ref,
        'status' in e ? e.status : '',
        'refStatus' in e ? e.refStatus : '',
        'reason' in e ? e.reason : '',
      ]),
    ).toEqual([
      ['ref-replicated', 'refs/heads/main', 'succeeded', 'OK', ''],
      ['ref-replicated', 'refs/heads/blocked', 'failed', 'REJECTED_OTHER_REASON', 'hook declined'],
      ['ref-replicated', 'refs/heads/old', 'succeeded', 'UP_TO_DATE', ''],
      ['ref-replicated', 'refs/heads/ff', 'failed', 'REJECTED_NONFASTFORWARD', 'non-fast-forward'],
      ['ref-replicated', 'refs/heads/gone', 'failed', 'REJECTED_NODELETE', 'deletion prohibited'],
      ['ref-replication-done', 'refs/heads/main', '', '', ''],
      ['ref-replication-done', 'refs/heads/blocked', '', '', ''],
    ]);
    expect(streamEventsOf(event, 'n1', AT).at(-1)).toEqual({ type: 'ref-replication-done', ref: 'refs/heads/blocked', nodesCount: 1, ...fields });
  });

  it('a push that failed as a whole: every carried ref failed, with the reason', () => {
    const events = streamEventsOf(pushed({ result: 'failed', failure: 'Connection refused' }), 'n1', AT);
    expect(events.filter((e) => e.type === 'ref-replicated')).toEqual([
      { type: 'ref-replicated', ref: 'refs/heads/main', status: 'failed', refStatus: 'REJECTED_OTHER_REASON', reason: 'Connection refused', ...fields },
      { type: 'ref-replicated', ref: 'refs/heads/blocked', status: 'failed', refStatus: 'REJECTED_OTHER_REASON', reason: 'Connection refused', ...fields },
    ]);
  });

  it('names the host of an ssh or scp-like URI as targetNode, and makes nothing of other node events', () => {
    const scp = streamEventsOf({ type: 'push-started', ...common, uri: 'git@mirror.example:app.git', refs: ['refs/heads/main'] }, 'n1', AT);
    expect(scp[0]!.targetNode).toBe('mirror.example');
    expect(streamEventsOf({ type: 'takeover', uriKey: 'k', formerNode: null, tasks: 1 }, 'n1', AT)).toEqual([]);
  });
});
