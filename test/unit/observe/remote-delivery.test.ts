import { describe, expect, it } from 'vitest';
import { RemoteDelivery } from '../../../src/observe/remote-delivery.js';
import type { ReplicationEvent } from '../../../src/schedule/events.js';

const pushed = (remote: string, result: 'ok' | 'partial' | 'failed'): ReplicationEvent => ({
  type: 'pushed',
  pushId: 'p',
  remote,
  uri: `/dest/${remote}/app.git`,
  uriKey: 'k',
  project: 'app',
  refs: ['refs/heads/main'],
  refResults: [],
  outcomes: {},
  durationMs: 10,
  result,
  oldestQueuedAtMs: 0,
});

const MINUTE = 60_000;

describe('RemoteDelivery: which remotes are failing for /readyz', () => {
  it('calls a remote failing once its last push failed and it delivered nothing for longer than the threshold, counting from the node start', () => {
    const delivery = new RemoteDelivery(0);
    delivery.record(pushed('dr', 'failed'), 1 * MINUTE);
    expect(delivery.failing(['dr'], 1 * MINUTE, 5 * MINUTE)).toEqual([]);
    expect(delivery.failing(['dr'], 5 * MINUTE + 1, 5 * MINUTE)).toEqual(['dr']);
    // Only while it has work waiting.
    expect(delivery.failing([], 5 * MINUTE + 1, 5 * MINUTE)).toEqual([]);
  });

  it('calls a remote that delivered long ago and now refuses failing at its first failed push, not after the threshold again', () => {
    const delivery = new RemoteDelivery(0);
    delivery.record(pushed('dr', 'ok'), 1 * MINUTE);
    delivery.record(pushed('dr', 'failed'), 60 * MINUTE);
    expect(delivery.failing(['dr'], 60 * MINUTE, 5 * MINUTE)).toEqual(['dr']);
  });

  it('never calls failing a remote whose last push delivered (partly or wholly), however long it was idle before', () => {
    const delivery = new RemoteDelivery(0);
    delivery.record(pushed('dr', 'failed'), 1 * MINUTE);
    delivery.record(pushed('dr', 'partial'), 2 * MINUTE);
    delivery.record(pushed('ci', 'ok'), 1 * MINUTE);
    expect(delivery.failing(['dr', 'ci', 'never-pushed'], 60 * MINUTE, 5 * MINUTE)).toEqual([]);
  });

  it('judges each remote on its own, and lists them sorted', () => {
    const delivery = new RemoteDelivery(0);
    for (const remote of ['zeta', 'alpha', 'ok']) delivery.record(pushed(remote, 'failed'), MINUTE);
    delivery.record(pushed('ok', 'ok'), 9 * MINUTE);
    expect(delivery.failing(['zeta', 'alpha', 'ok'], 10 * MINUTE, 5 * MINUTE)).toEqual(['alpha', 'zeta']);
  });
});
