import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterStatus } from '../../../src/observe/cluster-status.js';
import { isLoopbackHost, startHttpServer, type HttpDeps, type RunningHttpServer } from '../../../src/observe/http-server.js';
import { silentLog } from '../../../src/runtime/log.js';
import { NodeMetrics } from '../../../src/observe/metrics.js';
import { mergeTrends } from '../../../src/observe/trend.js';
import { EventStream } from '../../../src/observe/event-stream.js';

const KEY = 'b'.repeat(40);
const servers: RunningHttpServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function deps(overrides: Partial<HttpDeps> = {}): HttpDeps & { retried: unknown[]; dropped: unknown[] } {
  const retried: unknown[] = [];
  const dropped: unknown[] = [];
  const status: ClusterStatus = {
    version: 1,
    generatedAt: new Date(0).toISOString(),
    storePath: '/s',
    totals: { waiting: 1, running: 0, failed: 0, corrupt: 0 },
    trend: mergeTrends([], 0),
    remotes: [{ name: 'dr', configured: true, waiting: 1, running: 0, failed: 0, oldestWaitingAgeMs: 61_000, uris: [] }],
    running: [],
    storeClockOffsetMs: 0,
    nodes: [],
    circuits: [],
    backingOff: { uris: [], unread: 0 },
    verify: null,
    history: {},
    queueFrom: null,
    failed: [
      {
        uriKey: KEY,
        name: 'x.json',
        taskKey: 'x',
        uri: '/m/app.git',
        remote: 'dr',
        project: 'app',
        refs: ['refs/heads/main'],
        reason: 'rejected',
        failedAt: 0,
        failedAgeMs: 5000,
      },
    ],
  };
  return {
    retried,
    dropped,
    metrics: new NodeMetrics(() => 0),
    clusterStatus: async () => status,
    schedule: () => ({ nodeId: 'n1', uris: [] }),
    health: () => ({ ok: true, reasons: [] }),
    caughtUpThresholdMs: () => 60_000,
    retry: async (request) => {
      retried.push(request);
      return 2;
    },
    drop: async (request) => {
      dropped.push(request);
      return 1;
    },
    token: async () => 'right-token',
    log: silentLog,
    ...overrides,
  };
}

async function start(d: HttpDeps, tokenRequired?: boolean): Promise<string> {
  const server = await startHttpServer('127.0.0.1:0', d, tokenRequired === undefined ? {} : { tokenRequired });
  servers.push(server);
  return `http://${server.address}`;
}

const post = (base: string, body: unknown, headers: Record<string, string> = {}, action: 'retry' | 'drop' = 'retry') =>
  fetch(`${base}/api/${action}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('HTTP endpoints', () => {
  it('answers /readyz 503 with the lagging remotes past caughtUpThreshold, /healthz 503 with reasons', async () => {
    const base = await start(deps({ health: () => ({ ok: false, reasons: ['the store is not writable: ENOSPC'] }) }));
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'lagging',
      oldestWaitingAgeMs: 61_000,
      caughtUpThresholdMs: 60_000,
      laggingRemotes: ['dr'],
      failingRemotes: [],
      spooledTasks: 0,
    });
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'unhealthy', reasons: ['the store is not writable: ENOSPC'] });
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it("answers /readyz from the node's last pass when it has one, without reading the store", async () => {
    let statusReads = 0;
    const base = await start(
      deps({
        clusterStatus: async () => {
          statusReads++;
          throw new Error('the store was read');
        },
        oldestWaiting: () =>
          new Map([
            ['pub', 120_000],
            ['dr', 90_000],
            ['ci', 10_000],
          ]),
      }),
    );
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'lagging',
      oldestWaitingAgeMs: 120_000,
      caughtUpThresholdMs: 60_000,
      laggingRemotes: ['dr', 'pub'],
      failingRemotes: [],
      spooledTasks: 0,
    });
    expect(statusReads).toBe(0);
  });

  it('answers /readyz 503 for a remote whose pushes fail, before any of its tasks waited caughtUpThreshold', async () => {
    const asked: Array<{ waiting: string[]; thresholdMs: number }> = [];
    const base = await start(
      deps({
        oldestWaiting: () =>
          new Map([
            ['dr', 2_000],
            ['ci', 1_000],
          ]),
        failingRemotes: (waiting, thresholdMs) => {
          asked.push({ waiting: [...waiting], thresholdMs });
          return ['dr'];
        },
      }),
    );
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'lagging',
      oldestWaitingAgeMs: 2_000,
      caughtUpThresholdMs: 60_000,
      laggingRemotes: ['dr'],
      failingRemotes: ['dr'],
      spooledTasks: 0,
    });
    // Asked about the remotes with work waiting, against the threshold.
    expect(asked).toEqual([{ waiting: ['dr', 'ci'], thresholdMs: 60_000 }]);
  });

  it('sends durations and instants as whole milliseconds in /status and /readyz', async () => {
    const status = await deps().clusterStatus();
    const fractional: ClusterStatus = {
      ...status,
      remotes: [{ ...status.remotes[0]!, oldestWaitingAgeMs: 20_464.0693359375 }],
      storeClockOffsetMs: -0.3,
      history: { [KEY]: { uri: '/m/app.git', remote: 'dr', events: [{ at: 1_795_605_931_677.9307, node: 'n1', event: 'queued' }] } },
    };
    const schedule = {
      nodeId: 'n1',
      uris: [{ uri: '/m/app.git', remote: 'dr', waiting: 1, nextDueInMs: 1499.75, backoffUntilMs: null, running: false, runningForMs: null }],
    };
    const base = await start(deps({ clusterStatus: async () => fractional, schedule: () => schedule }));
    const text = await (await fetch(`${base}/status`)).text();
    expect(text).toContain('"oldestWaitingAgeMs": 20464,');
    expect(text).toContain('"storeClockOffsetMs": 0,');
    expect(text).toContain('"at": 1795605931678,');
    expect(text).toContain('"nextDueInMs": 1500,');
    expect(await (await fetch(`${base}/readyz`)).json()).toMatchObject({ oldestWaitingAgeMs: 20_464 });
  });

  it('answers /readyz 503 while this machine holds spooled tasks, even with the store caught up, and counts them in /metrics', async () => {
    const metrics = new NodeMetrics(() => 0);
    metrics.track({ spooledTasks: () => 3, storeWritable: () => true, lockStaleMs: () => 60_000, runningPushes: () => 0 });
    const base = await start(deps({ caughtUpThresholdMs: () => 120_000, spooledTasks: () => 3, metrics }));
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({
      status: 'lagging',
      oldestWaitingAgeMs: 61_000,
      caughtUpThresholdMs: 120_000,
      laggingRemotes: [],
      failingRemotes: [],
      spooledTasks: 3,
    });
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^refrelay_spooled_tasks 3$/m);
    const caughtUp = await start(deps({ caughtUpThresholdMs: () => 120_000, spooledTasks: () => 0 }));
    expect((await fetch(`${caughtUp}/readyz`)).status).toBe(200);
  });

  it('retries on loopback without a token, and checks the body', async () => {
    const d = deps();
    const base = await start(d);
    const ok = await post(base, { uriKey: KEY, names: ['x.json'] });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ retried: 2 });
    expect(d.retried).toEqual([{ uriKey: KEY, names: ['x.json'] }]);
    expect((await post(base, { uriKey: '../etc' })).status).toBe(400);
    expect((await post(base, { uriKey: KEY, names: 'x' })).status).toBe(400);
    const notJson = await fetch(`${base}/api/retry`, { method: 'POST', body: '{' });
    expect(notJson.status).toBe(400);
  });

  it('requires the bearer token off loopback, and refuses when no token is configured', async () => {
    const d = deps();
    const base = await start(d, true);
    expect((await post(base, { uriKey: KEY })).status).toBe(401);
    expect((await post(base, { uriKey: KEY }, { authorization: 'Bearer wrong-token' })).status).toBe(401);
    expect((await post(base, { uriKey: KEY }, { authorization: 'Bearer right-token' })).status).toBe(200);
    expect(d.retried).toHaveLength(1);
    const none = await start(deps({ token: async () => undefined }), true);
    const refused = await post(none, { uriKey: KEY }, { authorization: 'Bearer anything' });
    expect(refused.status).toBe(403);
    expect((await refused.json()) as object).toEqual({ error: 'retry over the network needs replication.httpToken (or httpTokenFile); none is set' });
  });

  it('streams the events at /events, on loopback freely and off it with the token only', async () => {
    const stream = new EventStream();
    const d = deps({ events: (response) => stream.listen(response) });
    const open = await start(d);
    const response = await fetch(`${open}/events`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    const event = {
      type: 'ref-replication-scheduled',
      project: 'app',
      ref: 'refs/heads/main',
      targetNode: 'h',
      targetUri: 'git://h/app.git',
      remote: 'dr',
      nodeId: 'n1',
      eventCreatedOn: 1,
    } as const;
    let text = '';
    while (!text.includes('refs/heads/main')) {
      text += new TextDecoder().decode((await reader.read()).value);
      if (text.startsWith(': refrelay events') && stream.listenerCount === 1 && !text.includes('id: 1')) stream.publish([event]);
    }
    expect(text).toBe(`: refrelay events\n\nid: 1\nevent: ref-replication-scheduled\ndata: ${JSON.stringify(event)}\n\n`);
    await reader.cancel();

    const guarded = await start(d, true);
    expect((await fetch(`${guarded}/events`)).status).toBe(401);
    const allowed = await fetch(`${guarded}/events`, { headers: { authorization: 'Bearer right-token' } });
    expect(allowed.status).toBe(200);
    await allowed.body!.cancel();
    const none = await start(deps({ token: async () => undefined, events: (r) => stream.listen(r) }), true);
    const refused = await fetch(`${none}/events`);
    expect(refused.status).toBe(403);
    expect((await refused.json()) as object).toEqual({
      error: 'the event stream over the network needs replication.httpToken (or httpTokenFile); none is set',
    });
  });

  it('the page off loopback asks for the token, or says it is read-only and offers no Retry when none is configured', async () => {
    const withToken = await (await fetch(`${await start(deps(), true)}/`)).text();
    expect(withToken).toContain('Token for Retry and Drop: <input id="token"');
    expect(withToken).toContain(`<button class="retry" data-uri-key="${KEY}" data-name="x.json">Retry</button>`);
    expect(withToken).toContain(`<button class="drop" data-uri-key="${KEY}" data-name="x.json"`);
    expect(withToken).not.toContain('Read-only');
    const readOnly = await (await fetch(`${await start(deps({ token: async () => undefined }), true)}/`)).text();
    expect(readOnly).toContain('Read-only: this listener is not loopback-only and no replication.httpToken is set, so Retry and Drop are off.');
    expect(readOnly).not.toContain('<button class="retry"');
    expect(readOnly).not.toContain('<button class="drop"');
    expect(readOnly).not.toContain('<input id="token"');
    const loopback = await (await fetch(`${await start(deps())}/`)).text();
    expect(loopback).not.toContain('Read-only');
    expect(loopback).not.toContain('<input id="token"');
  });

  it('drops the named failed tasks with the same token rules as retry, and never a whole URI unnamed', async () => {
    const local = deps();
    const base = await start(local);
    const ok = await post(base, { uriKey: KEY, names: ['x.json'] }, {}, 'drop');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ dropped: 1 });
    expect(local.dropped).toEqual([{ uriKey: KEY, names: ['x.json'], from: '127.0.0.1' }]);
    const unnamed = await post(base, { uriKey: KEY }, {}, 'drop');
    expect(unnamed.status).toBe(400);
    expect(await unnamed.json()).toEqual({ error: 'names must list the task files to drop' });
    expect((await post(base, { uriKey: '../etc', names: ['x.json'] }, {}, 'drop')).status).toBe(400);
    expect((await fetch(`${base}/api/drop`)).status).toBe(405);
    expect(local.dropped).toHaveLength(1);

    const remote = deps();
    const guarded = await start(remote, true);
    expect((await post(guarded, { uriKey: KEY, names: ['x.json'] }, {}, 'drop')).status).toBe(401);
    expect((await post(guarded, { uriKey: KEY, names: ['x.json'] }, { authorization: 'Bearer wrong-token' }, 'drop')).status).toBe(401);
    expect((await post(guarded, { uriKey: KEY, names: ['x.json'] }, { authorization: 'Bearer right-token' }, 'drop')).status).toBe(200);
    expect(remote.dropped).toHaveLength(1);
    const none = await start(deps({ token: async () => undefined }), true);
    const refused = await post(none, { uriKey: KEY, names: ['x.json'] }, { authorization: 'Bearer anything' }, 'drop');
    expect(refused.status).toBe(403);
    expect((await refused.json()) as object).toEqual({ error: 'drop over the network needs replication.httpToken (or httpTokenFile); none is set' });
  });

  it('knows loopback hosts', () => {
    expect(['127.0.0.1', '127.3.0.9', '::1', 'localhost'].map(isLoopbackHost)).toEqual([true, true, true, true]);
    expect(['0.0.0.0', '10.0.0.1', '::', 'example.com'].map(isLoopbackHost)).toEqual([false, false, false, false]);
  });
});
