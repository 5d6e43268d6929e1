import { describe, expect, it } from 'vitest';
import type { PushOutcome, PushRequest } from '../../../src/push/git-pusher.js';
import { runPushJob } from '../../../src/schedule/push-job.js';
import type { UriGroup } from '../../../src/schedule/uri-groups.js';
import { harness, uriKey, type Harness } from './scheduler-harness.js';

const URI = '/dest/mirror/app.git';
const LOCK = '[remote rejected] (failed to update ref)';

/** The URI's group as a pass lists it. */
function due(h: Harness): Promise<UriGroup> {
  return h.groupOf(URI);
}

/** The destination takes every ref but refs/heads/stuck, which it cannot write. */
function stuckRefused(request: PushRequest): Partial<PushOutcome> {
  return {
    result: 'partial',
    refs: request.refs.map((ref) =>
      ref === 'refs/heads/stuck'
        ? { ref, dst: ref, status: 'rejected' as const, detail: LOCK, transient: true }
        : { ref, dst: ref, status: 'up-to-date' as const },
    ),
  };
}

function setup(extra: string[] = []): Harness {
  return harness([
    'replication.randomDelay=0',
    'remote.mirror.url=/dest/mirror/${name}.git',
    'remote.mirror.replicationDelay=0',
    'remote.mirror.replicationRetry=1m',
    ...extra,
  ]);
}

describe('a ref the destination refuses every time while it takes the others', () => {
  it('is pushed again without backoff, and parked in failed/ on the third refusal in a row; the other refs finish', async () => {
    const h = setup();
    await h.store.create({ project: 'app', refs: ['refs/heads/main', 'refs/heads/stuck'], uri: URI, remote: 'mirror' });
    h.pusher.respond = stuckRefused;

    for (const count of [1, 2]) {
      const result = await runPushJob(h.deps, await due(h), new AbortController().signal);
      expect(result).toMatchObject({ kind: 'pushed', failedRefs: 0, refusedForNow: 1 });
      const state = (await h.store.readUriState(uriKey(URI))) as Record<string, unknown>;
      // No backoff: the URI's other updates are not held up.
      expect(state).toMatchObject({ notBefore: 0, attempts: 0, refRejections: { 'refs/heads/stuck': { reason: LOCK, count } } });
      expect(h.waitingTasks().map((t) => t.task.refs)).toEqual([['refs/heads/main', 'refs/heads/stuck']]);
      h.clock.advance(3000);
    }

    const third = await runPushJob(h.deps, await due(h), new AbortController().signal);
    expect(third).toMatchObject({ kind: 'pushed', failedRefs: 1 });
    expect(h.waitingTasks()).toEqual([]);
    const failed = await h.store.listFailed();
    expect(failed.map((f) => [f.task.refs, f.reason?.reason])).toEqual([
      [['refs/heads/stuck'], `rejected by the destination: ${LOCK} (refused 3 times in a row)`],
    ]);
    expect(await h.store.readUriState(uriKey(URI))).toBeUndefined();
    expect(h.pusher.requests).toHaveLength(3);
  });

  it('follows replication.refRejectionLimit', async () => {
    const h = setup(['replication.refRejectionLimit=1']);
    await h.store.create({ project: 'app', refs: ['refs/heads/main', 'refs/heads/stuck'], uri: URI, remote: 'mirror' });
    h.pusher.respond = stuckRefused;
    expect(await runPushJob(h.deps, await due(h), new AbortController().signal)).toMatchObject({ kind: 'pushed', failedRefs: 1 });
    expect((await h.store.listFailed()).map((f) => f.task.refs)).toEqual([['refs/heads/stuck']]);
  });

  it('counts no attempt while the whole push fails: that backs the URI off as before, and the run goes on after it', async () => {
    const h = setup();
    await h.store.create({ project: 'app', refs: ['refs/heads/main', 'refs/heads/stuck'], uri: URI, remote: 'mirror' });
    h.pusher.respond = stuckRefused;
    await runPushJob(h.deps, await due(h), new AbortController().signal);

    h.pusher.respond = () => ({
      result: 'failed',
      refs: [],
      failure: { kind: 'transient', message: 'the destination could not update refs/heads/stuck', stderrTail: '', retryable: true },
    });
    const failed = await runPushJob(h.deps, await due(h), new AbortController().signal);
    expect(failed).toMatchObject({ kind: 'retry', attempts: 1 });
    expect(await h.store.readUriState(uriKey(URI))).toMatchObject({ attempts: 1, refRejections: { 'refs/heads/stuck': { count: 1 } } });
    expect(await runPushJob(h.deps, await due(h), new AbortController().signal)).toMatchObject({ kind: 'backoff' });

    h.clock.advance(60_000);
    h.pusher.respond = stuckRefused;
    await runPushJob(h.deps, await due(h), new AbortController().signal);
    expect(await h.store.readUriState(uriKey(URI))).toMatchObject({ attempts: 0, notBefore: 0, refRejections: { 'refs/heads/stuck': { count: 2 } } });
  });

  it('forgets the run once the ref lands', async () => {
    const h = setup();
    await h.store.create({ project: 'app', refs: ['refs/heads/main', 'refs/heads/stuck'], uri: URI, remote: 'mirror' });
    h.pusher.respond = stuckRefused;
    await runPushJob(h.deps, await due(h), new AbortController().signal);
    h.pusher.respond = () => ({});
    expect(await runPushJob(h.deps, await due(h), new AbortController().signal)).toMatchObject({ kind: 'pushed', failedRefs: 0 });
    expect(await h.store.readUriState(uriKey(URI))).toBeUndefined();
    expect(h.waitingTasks()).toEqual([]);
  });
});
