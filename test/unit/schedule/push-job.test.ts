import { describe, expect, it } from 'vitest';
import type { Log } from '../../../src/runtime/log.js';
import type { Pusher, PushOutcome, PushRequest } from '../../../src/push/git-pusher.js';
import type { SchedulerLocks } from '../../../src/schedule/ports.js';
import { FakeTimers } from '../../support/fake-clock.js';
import { runPushJob } from '../../../src/schedule/push-job.js';
import type { UriGroup } from '../../../src/schedule/uri-groups.js';
import type { WaitingTask } from '../../../src/store/task-store.js';
import { encodeTask, taskKey, type Task } from '../../../src/task/task.js';
import { refusalGraceMs } from '../../../src/schedule/park-untrusted.js';
import { movedToFailed } from '../../../src/schedule/job-result.js';
import { harness, uriKey, ROOT, type FakePusher } from './scheduler-harness.js';

// basenameOnly (as Gerrit spells it): projects a/shared and b/shared both replicate to SHARED_URI.
const config = [
  'replication.randomDelay=0',
  'remote.mirror.url=/dest/mirror/${name}.git',
  'remote.mirror.replicationDelay=0',
  'remote.mirror.remoteNameStyle=basenameOnly',
];
const SHARED_URI = '/dest/mirror/shared.git';

/** A log that keeps its warnings. */
function recordingLog(): Log & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug: () => undefined, info: () => undefined, warn: (_fields, message) => warnings.push(message ?? ''), error: () => undefined };
}

/** Two projects queued for one URI: each is its own git push within one job. The group as a pass lists it, and the tasks in its folder. */
async function twoUnits(h: ReturnType<typeof harness>): Promise<{ group: UriGroup; tasks: WaitingTask[] }> {
  await h.enqueue('a/shared', ['refs/heads/main'], 'mirror', SHARED_URI);
  await h.enqueue('b/shared', ['refs/heads/main'], 'mirror', SHARED_URI);
  const group = await h.groupOf(SHARED_URI);
  expect(group.taskCount).toBe(2);
  return { group, tasks: h.waitingTasks() };
}

const namesOf = (tasks: readonly WaitingTask[]): string[] => tasks.map((t) => t.name).sort();
const ofProject = (tasks: readonly WaitingTask[], project: string): WaitingTask => tasks.find((t) => t.task.project === project)!;

/** The store, counting `finish` calls. */
function countingFinish(h: ReturnType<typeof harness>): { store: typeof h.store; finishes: () => number } {
  let finishes = 0;
  const store = Object.assign(Object.create(h.store) as typeof h.store, {
    finish: async (lockName: string, names: readonly string[]) => {
      finishes++;
      return h.store.finish(lockName, names);
    },
  });
  return { store, finishes: () => finishes };
}

/** The node read the first unit's refs, then lay still past lockStale: a peer took the URI over before its push ended. */
function takenOverDuringFirstPush(h: ReturnType<typeof harness>): void {
  h.pusher.respond = () => {
    h.locks.held.set(uriKey(SHARED_URI), 'taken-over');
    return {};
  };
}

/** Project b's push fails with a retryable error; a's lands. */
const bFailsTransiently: FakePusher['respond'] = (request) =>
  request.localRepo === '/repos/b/shared.git'
    ? { result: 'failed', refs: [], failure: { kind: 'unreachable', message: 'connection reset', stderrTail: '', retryable: true } }
    : {};

describe('finishing a push job: one rename of the claim folder when the lease can retire it', () => {
  it('moves every pushed task to done/ with the lock released, and deletes no file one by one', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    const { group, tasks } = await twoUnits(h);
    const counting = countingFinish(h);

    const result = await runPushJob({ ...h.deps, store: counting.store }, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 2 });
    expect(h.pusher.requests).toHaveLength(2);
    expect(counting.finishes()).toBe(0);
    expect(h.locks.calls).toEqual({ release: 0, retire: 1 });
    expect(h.locks.retiredNames).toEqual([namesOf(tasks)]);
    expect(h.locks.held.size).toBe(0);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
    const [retired] = h.fs.readdirSync(`${ROOT}/ref-updates/done`);
    expect(retired).toMatch(new RegExp(`^${uriKey(SHARED_URI)}\\.lease-`));
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done/${retired}`).sort()).toEqual(namesOf(tasks));
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('retires the folder when the other tasks went to failed/, so none of them is lost or pushed twice', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    const { group, tasks } = await twoUnits(h);
    h.pusher.respond = (request) =>
      request.localRepo === '/repos/b/shared.git'
        ? {
            result: 'failed',
            refs: [],
            failure: { kind: 'local-missing', message: 'local repository /repos/b/shared.git does not exist', stderrTail: '', retryable: false },
          }
        : {};

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result.kind).toBe('pushed');
    expect(h.locks.calls.retire).toBe(1);
    expect((await h.store.listFailed()).map((f) => f.task.project)).toEqual(['b/shared']);
    const [retired] = h.fs.readdirSync(`${ROOT}/ref-updates/done`);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done/${retired}`)).toEqual([ofProject(tasks, 'a/shared').name]);
  });

  it('retires the folder when the other task went back to waiting/ for a retry, which waits on', async () => {
    const h = harness([...config, 'remote.mirror.replicationRetry=4s']);
    h.locks.retiring = true;
    const { group } = await twoUnits(h);
    h.pusher.respond = bFailsTransiently;
    const counting = countingFinish(h);

    const result = await runPushJob({ ...h.deps, store: counting.store }, group, new AbortController().signal);

    expect(result.kind).toBe('retry');
    expect(h.locks.calls).toEqual({ release: 0, retire: 1 });
    expect(counting.finishes()).toBe(0);
    expect(h.waitingTasks().map((t) => t.task.project)).toEqual(['b/shared']);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
  });

  it('falls back to deleting the pushed files and a plain release when the store refuses the move, with a warning', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    h.locks.retireFails = true;
    const { group } = await twoUnits(h);
    const log = recordingLog();
    const counting = countingFinish(h);

    const result = await runPushJob({ ...h.deps, store: counting.store, log }, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 2 });
    expect(h.locks.calls).toEqual({ release: 1, retire: 1 });
    expect(counting.finishes()).toBe(1);
    expect(log.warnings).toEqual(['could not move the finished claim folder aside; deleting its files one by one']);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done`)).toEqual([]);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('does not retire when the lock is lost after the first push: both tasks stay claimed for the new holder to recover', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    const { group, tasks } = await twoUnits(h);
    h.pusher.respond = (request) => {
      if (request.localRepo === '/repos/b/shared.git') h.locks.held.set(uriKey(SHARED_URI), 'taken-over');
      return {};
    };
    const counting = countingFinish(h);

    const result = await runPushJob({ ...h.deps, store: counting.store }, group, new AbortController().signal);

    expect(result.kind).toBe('lock-lost');
    expect(h.locks.calls.retire).toBe(0);
    expect(counting.finishes()).toBe(0);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running/${uriKey(SHARED_URI)}`).sort()).toEqual(namesOf(tasks));
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done`)).toEqual([]);
    // Both pushes started, so both are queued again too (see the next test).
    expect((await h.store.listWaitingNames()).sort()).toEqual(namesOf(tasks));
  });

  it("queues the tasks of every push it started again when the lock turns out lost: what it pushed may be older than the new holder's push", async () => {
    const h = harness(config);
    const { group, tasks } = await twoUnits(h);
    const log = recordingLog();
    takenOverDuringFirstPush(h);

    const result = await runPushJob({ ...h.deps, log }, group, new AbortController().signal);

    expect(result.kind).toBe('lock-lost');
    // Only a's push started: the lock was found lost before b's.
    const a = ofProject(tasks, 'a/shared');
    expect(await h.store.listWaitingNames()).toEqual([a.name]);
    expect(log.warnings).toContain('lost the URI lock after starting a push; its tasks are queued again');
  });

  it('spools the tasks to queue again when the store refuses them, as a full store does', async () => {
    const h = harness(config);
    const { group, tasks } = await twoUnits(h);
    const log = recordingLog();
    takenOverDuringFirstPush(h);
    const full = Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
    const store = Object.assign(Object.create(h.store) as typeof h.store, { createMany: async () => Promise.reject(full) });
    const spooled: Task[] = [];

    const result = await runPushJob({ ...h.deps, store, log, spool: async (tasks) => void spooled.push(...tasks) }, group, new AbortController().signal);

    expect(result.kind).toBe('lock-lost');
    expect(spooled).toEqual([ofProject(tasks, 'a/shared').task]);
    expect(log.warnings).toContain('lost the URI lock after starting a push; the store refused its tasks, so they are spooled');
  });

  it('queues nothing again when the lock is lost before any push started', async () => {
    const h = harness(config);
    const { group } = await twoUnits(h);
    const store = Object.assign(Object.create(h.store) as typeof h.store, {
      claim: async (lockName: string, key: string) => {
        const claimed = await h.store.claim(lockName, key);
        h.locks.held.set(uriKey(SHARED_URI), 'taken-over');
        return claimed;
      },
    });

    const result = await runPushJob({ ...h.deps, store }, group, new AbortController().signal);

    expect(result.kind).toBe('lock-lost');
    expect(h.pusher.requests).toEqual([]);
    expect(await h.store.listWaitingNames()).toEqual([]);
  });

  it('does not retire when a task it meant to put back in waiting/ did not move: the pushed one is deleted, the other stays claimed', async () => {
    const h = harness([...config, 'remote.mirror.replicationRetry=4s']);
    h.locks.retiring = true;
    const { group, tasks } = await twoUnits(h);
    h.pusher.respond = bFailsTransiently;
    const store = Object.assign(Object.create(h.store) as typeof h.store, { reset: async () => [] as string[] });

    await runPushJob({ ...h.deps, store }, group, new AbortController().signal);

    expect(h.locks.calls).toEqual({ release: 1, retire: 0 });
    const left = h.fs.readdirSync(`${ROOT}/ref-updates/running/${uriKey(SHARED_URI)}`);
    expect(left).toEqual([ofProject(tasks, 'b/shared').name]);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done`)).toEqual([]);
  });

  it('with a lease that cannot retire, finishes each push unit as before', async () => {
    const h = harness(config);
    const { group } = await twoUnits(h);
    const counting = countingFinish(h);

    await runPushJob({ ...h.deps, store: counting.store }, group, new AbortController().signal);

    expect(counting.finishes()).toBe(2);
    expect(h.locks.calls).toEqual({ release: 1, retire: 0 });
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
  });
});

describe('a claim folder that was the waiting folder, renamed in by the lock', () => {
  const folderOf = (uri: string): string => `${ROOT}/ref-updates/waiting/${uriKey(uri)}`;

  it('pushes the tasks it took in with the folder and retires it whole', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    h.locks.movingIn = true;
    const { group, tasks } = await twoUnits(h);

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 2 });
    expect(h.locks.calls).toEqual({ release: 0, retire: 1 });
    const [retired] = h.fs.readdirSync(`${ROOT}/ref-updates/done`);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done/${retired}`).sort()).toEqual(namesOf(tasks));
    expect(h.fs.existsSync(folderOf(SHARED_URI))).toBe(false);
  });

  it('gives a task that arrived after the claim read the folder back to waiting/, unpushed, and then retires the folder', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    h.locks.movingIn = true;
    const { group, tasks } = await twoUnits(h);
    // A client that looked the folder up before the rename links a new update into it mid-push.
    const late: Task = { project: 'a/shared', refs: ['refs/heads/late'], uri: SHARED_URI, remote: 'mirror' };
    const lateName = `${taskKey(late)}.json`;
    h.pusher.respond = () => {
      h.fs.writeRaw(`${ROOT}/ref-updates/running/${uriKey(SHARED_URI)}/${lateName}`, encodeTask(late));
      return {};
    };

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 2 });
    expect(h.pusher.requests.flatMap((request) => request.refs)).not.toContain('refs/heads/late');
    expect(h.locks.calls.retire).toBe(2);
    expect(h.waitingTasks().map((t) => t.name)).toEqual([lateName]);
    const [retired] = h.fs.readdirSync(`${ROOT}/ref-updates/done`);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/done/${retired}`).sort()).toEqual(namesOf(tasks));
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
  });

  it('releases the lock when the store fails both the retire and the give-back after a push that landed', async () => {
    const h = harness(config);
    h.locks.retiring = true;
    h.locks.retireFails = true;
    h.locks.movingIn = true;
    const { group } = await twoUnits(h);
    // A short outage of the store (EIO) starts as the pushes end: every give-back fails.
    const failingGiveBack = Object.assign(Object.create(h.store) as typeof h.store, {
      giveBack: async () => {
        throw Object.assign(new Error('EIO: i/o error, scandir'), { code: 'EIO' });
      },
    });
    const log = recordingLog();

    const result = await runPushJob({ ...h.deps, store: failingGiveBack, log }, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 2 });
    // Released, not kept by this node for ever: its own observer never looks at a lock it holds.
    expect(h.locks.calls.release).toBe(1);
    expect(h.locks.held.size).toBe(0);
    expect(log.warnings).toEqual([
      'could not move the finished claim folder aside; deleting its files one by one',
      'could not finish the claim folder; its lock is released or left to recovery',
    ]);
  });

  it('gives every task back unread when the lock finds the URI backing off', async () => {
    const h = harness(config);
    h.locks.movingIn = true;
    const { group, tasks } = await twoUnits(h);
    await h.store.writeUriState(uriKey(SHARED_URI), {
      uri: SHARED_URI,
      attempts: 1,
      lastError: 'connection refused',
      notBefore: h.clock.now() + 60_000,
      updatedAt: h.clock.now(),
      nodeId: 'node-b',
    });

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'backoff' });
    expect(h.pusher.requests).toEqual([]);
    expect(namesOf(h.waitingTasks())).toEqual(namesOf(tasks));
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
  });
});

describe('recording the running push in the owner record', () => {
  it("records each push's pid with its start time and boot id, and never pairs a later pid with an earlier push's start time", async () => {
    const h = harness(config);
    const { group } = await twoUnits(h);
    const beats: Array<Record<string, unknown>> = [];
    const locks = {
      acquire: async (lockName: string, uri: string) => {
        const lease = await h.locks.acquire(lockName, uri);
        if (lease === undefined) return undefined;
        return Object.assign(Object.create(lease) as typeof lease, {
          heartbeat: async (extra: Record<string, unknown> = {}) => {
            beats.push({ ...extra });
            return lease.heartbeat();
          },
        });
      },
    };
    // Project a's git gets pid 101, b's 102; only 101's start time can be read (102 already gone).
    const pids = new Map([
      ['/repos/a/shared.git', 101],
      ['/repos/b/shared.git', 102],
    ]);
    h.pusher.respond = (request) => {
      // The record write it starts is what git waits for; the beats are checked below.
      void request.onPushSpawn?.(pids.get(request.localRepo)!);
      return {};
    };
    const identifyPush = (pid: number) => (pid === 101 ? { pushStartTime: 25756, bootId: 'boot-1' } : { bootId: 'boot-1' });

    const result = await runPushJob({ ...h.deps, locks, identifyPush }, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 2 });
    expect(beats).toEqual([
      { pushPid: 101, pushStartTime: 25756, bootId: 'boot-1' },
      { pushPid: 102, pushStartTime: undefined, bootId: 'boot-1' },
    ]);
  });
});

describe('a holder whose lock heartbeat cannot be written (a full store)', () => {
  /** Locks whose records were written at acquire and never again: every heartbeat fails with ENOSPC. */
  function enospcLocks(h: ReturnType<typeof harness>): SchedulerLocks & { beats: number } {
    const locks = {
      beats: 0,
      acquire: async (lockName: string, uri: string) => {
        const lease = await h.locks.acquire(lockName, uri);
        if (lease === undefined) return undefined;
        const wroteAt = h.clock.monotonic();
        return Object.assign(Object.create(lease) as typeof lease, {
          lastWriteAt: wroteAt,
          heartbeat: async () => {
            locks.beats++;
            throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
          },
        });
      },
    };
    return locks;
  }

  /** A git push that runs until it is aborted. */
  function endlessPusher(): Pusher & { started: number } {
    const pusher = {
      started: 0,
      push: (request: PushRequest) =>
        new Promise<PushOutcome>((resolve) => {
          pusher.started++;
          request.signal?.addEventListener('abort', () =>
            resolve({
              result: 'failed',
              refs: [],
              createdRepository: false,
              durationMs: 0,
              argv: [],
              failure: { kind: 'aborted', message: 'push aborted', stderrTail: '', retryable: false },
            }),
          );
        }),
    };
    return pusher;
  }

  it('aborts its push lockStale / 2 after its last record write, not before, puts the tasks back in waiting/ and gives up the lock', async () => {
    const h = harness([...config, 'replication.lockStale=6s']);
    await h.enqueue('a', ['refs/heads/main']);
    const group = await h.groupOf(h.uriOf('a'));
    const tasks = h.waitingTasks();
    const timers = new FakeTimers(h.clock);
    const locks = enospcLocks(h);
    const pusher = endlessPusher();
    const log = recordingLog();

    let settled = false;
    const job = runPushJob({ ...h.deps, timers, locks, pusher, log }, group, new AbortController().signal).finally(() => (settled = true));
    await h.settle();
    expect(pusher.started).toBe(1);

    await timers.advance(2999, () => h.settle());
    expect(locks.beats).toBeGreaterThan(0);
    expect(settled).toBe(false);
    expect(log.warnings.filter((w) => w.startsWith('lock heartbeat writes failed'))).toEqual([]);

    await timers.advance(1, () => h.settle());
    const result = await job;

    expect(result.kind).toBe('stalled');
    expect(String((result as { error: unknown }).error)).toMatch(/ENOSPC/);
    expect(log.warnings).toContain('lock heartbeat writes failed for 3000ms; aborting the push before the lock can be judged stale');
    expect(h.waitingTasks()).toEqual(tasks);
    expect(h.locks.held.size).toBe(0);
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
  });

  it('goes on pushing while its heartbeat writes succeed, however long the push takes', async () => {
    const h = harness([...config, 'replication.lockStale=6s']);
    await h.enqueue('a', ['refs/heads/main']);
    const group = await h.groupOf(h.uriOf('a'));
    const timers = new FakeTimers(h.clock);
    h.pusher.manual = true;

    let settled = false;
    const job = runPushJob({ ...h.deps, timers }, group, new AbortController().signal).finally(() => (settled = true));
    await h.settle();
    expect(h.pusher.inFlight).toBe(1);
    await timers.advance(60_000, () => h.settle());
    expect(settled).toBe(false);
    h.pusher.releaseAll();

    expect(await job).toMatchObject({ kind: 'pushed', claimed: 1 });
  });
});

describe('a job checks every task it claimed: the task its folder was learned by spoke for the others', () => {
  // Grace before a refused task is parked: lockStale + 2 × (distributionInterval + randomDelay) = 32 s.
  const checked = [...config, 'replication.lockStale=30s', 'replication.distributionInterval=1s'];
  const URI = '/dest/mirror/p.git';

  /** Writes a task file straight into p's live folder, as a person or a tool with access to the store could. */
  function forge(h: ReturnType<typeof harness>, task: Task, mtimeMs: number): WaitingTask {
    const key = taskKey(task);
    const path = h.store.paths.waitingFile(uriKey(URI), `${key}.json`);
    h.fs.writeRaw(path, encodeTask(task));
    h.fs.setMtime(path, mtimeMs);
    return { name: `${key}.json`, key, task, mtimeMs };
  }

  it('pushes the tasks it may, parks refused ones past their grace in failed/ with the reason, and puts younger ones back', async () => {
    const h = harness(checked);
    expect(refusalGraceMs(h.deps.config())).toBe(32_000);
    await h.enqueue('p', ['refs/heads/main']);
    const group = await h.groupOf(URI);
    const now = h.clock.now();
    const old = forge(h, { project: 'p', refs: ['refs/heads/../x'], uri: URI, remote: 'mirror' }, now - 32_000);
    const young = forge(h, { project: 'p', refs: ['refs/heads/dev'], uri: URI, remote: 'unknown' }, now - 31_999);
    h.locks.retiring = true;

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'pushed', claimed: 1, failedTasks: 1 });
    expect(h.pusher.requests.map((request) => request.refs)).toEqual([['refs/heads/main']]);
    const failed = await h.store.listFailed();
    expect(failed.map((item) => [item.name, item.reason?.reason])).toEqual([[old.name, 'invalid ref name "refs/heads/../x": contains ".."']]);
    expect(h.waitingTasks()).toEqual([young]);
    // Every task it claimed went somewhere: the claim folder retires whole.
    expect(h.locks.calls).toEqual({ release: 0, retire: 1 });
    expect(h.fs.readdirSync(`${ROOT}/ref-updates/running`)).toEqual([]);
  });

  it('counts the refused tasks it parked whatever the push comes to, so that a drain knows something went to failed/', async () => {
    const h = harness([...checked, 'remote.mirror.replicationRetry=4s']);
    await h.enqueue('p', ['refs/heads/main']);
    const group = await h.groupOf(URI);
    forge(h, { project: 'p', refs: ['refs/heads/../x'], uri: URI, remote: 'mirror' }, h.clock.now() - 32_000);
    h.pusher.respond = () => ({ result: 'failed', refs: [], failure: { kind: 'unreachable', message: 'connection reset', stderrTail: '', retryable: true } });

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result).toMatchObject({ kind: 'retry', attempts: 1, failedTasks: 1 });
    expect(movedToFailed(result)).toBe(1);
    expect(h.waitingTasks().map((t) => t.task.refs)).toEqual([['refs/heads/main']]);
  });

  it('parks a task of another URI found in the folder under that URI, and pushes nothing when nothing else is left', async () => {
    const h = harness(checked);
    await h.enqueue('p', ['refs/heads/main']);
    const group = await h.groupOf(URI);
    // The learned task went meanwhile (a peer pushed it); a task of q sits in p's folder.
    await h.fs.unlink(h.store.paths.waitingFile(uriKey(URI), h.waitingTasks()[0]!.name));
    const stray = forge(h, { project: 'q', refs: ['refs/heads/main'], uri: '/dest/mirror/q.git', remote: 'mirror' }, h.clock.now() - 60_000);

    const result = await runPushJob(h.deps, group, new AbortController().signal);

    expect(result).toEqual({ kind: 'nothing-claimed', failedTasks: 1 });
    expect(h.pusher.requests).toEqual([]);
    const failed = await h.store.listFailed();
    expect(failed.map((item) => [item.uriKey, item.name, item.reason?.reason])).toEqual([
      [uriKey('/dest/mirror/q.git'), stray.name, 'a task for "/dest/mirror/q.git" in the waiting folder of another URI'],
    ]);
    expect(h.waitingTasks()).toEqual([]);
    expect(h.locks.held.size).toBe(0);
  });

  it('puts a young task of another URI back into the folder of its own URI', async () => {
    const h = harness(checked);
    await h.enqueue('p', ['refs/heads/main']);
    const group = await h.groupOf(URI);
    const stray = forge(h, { project: 'q', refs: ['refs/heads/main'], uri: '/dest/mirror/q.git', remote: 'mirror' }, h.clock.now());

    expect(await runPushJob(h.deps, group, new AbortController().signal)).toMatchObject({ kind: 'pushed', claimed: 1 });

    expect(h.pusher.requests.map((request) => request.localRepo)).toEqual(['/repos/p.git']);
    expect(await h.store.listFailed()).toEqual([]);
    expect(h.fs.readdirSync(h.store.paths.waiting)).toEqual([uriKey('/dest/mirror/q.git')]);
    expect(h.waitingTasks()).toEqual([stray]);
  });
});
