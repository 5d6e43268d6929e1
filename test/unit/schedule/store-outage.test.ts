import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/errors.js';
import type { Log } from '../../../src/runtime/log.js';
import { Distributor } from '../../../src/schedule/distributor.js';
import { StoreOutage, storeFailureCode, storeRetryDelayMs } from '../../../src/schedule/store-outage.js';
import { FakeClock } from '../../support/fake-clock.js';
import { harness } from './scheduler-harness.js';

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe('which errors are store failures', () => {
  it('finds ENOSPC, EROFS, EIO and EDQUOT, also as the cause of a StoreError', () => {
    expect(storeFailureCode(enospc())).toBe('ENOSPC');
    expect(storeFailureCode(new StoreError('claim failed (EROFS) at /store', { cause: Object.assign(new Error('read-only'), { code: 'EROFS' }) }))).toBe(
      'EROFS',
    );
    expect(storeFailureCode(Object.assign(new Error('i/o'), { code: 'EIO' }))).toBe('EIO');
    expect(storeFailureCode(Object.assign(new Error('quota'), { code: 'EDQUOT' }))).toBe('EDQUOT');
  });

  it("counts any StoreError, by its cause's errno, and nothing else", () => {
    expect(storeFailureCode(new StoreError('list failed', { cause: Object.assign(new Error('gone'), { code: 'ENOENT' }) }))).toBe('ENOENT');
    expect(storeFailureCode(new StoreError('odd'))).toBe('STORE');
    expect(storeFailureCode(new Error('a bug'))).toBeUndefined();
    expect(storeFailureCode(Object.assign(new Error('lost race'), { code: 'ENOENT' }))).toBeUndefined();
    expect(storeFailureCode(undefined)).toBeUndefined();
  });
});

describe('backing off from a failing store, per node', () => {
  it('waits distributionInterval / 8 after the first failure, doubling up to distributionInterval', () => {
    expect([1, 2, 3, 4, 5, 10].map((n) => storeRetryDelayMs(n, 1000))).toEqual([125, 250, 500, 1000, 1000, 1000]);
    expect(storeRetryDelayMs(0, 1000)).toBe(0);
  });

  it('lets one probe start after the delay, none while it runs, and everything once a write succeeded', () => {
    const clock = new FakeClock();
    const outage = new StoreOutage(clock, () => 1000);
    expect(outage.mayStart()).toBe(true);
    outage.failed('push', enospc(), 'push job failed');
    expect(outage.mayStart()).toBe(false);
    clock.advance(125);
    expect(outage.mayStart()).toBe(true);
    outage.started();
    outage.failed('push', enospc(), 'push job failed');
    outage.ended();
    // The node heartbeat fails every interval: that must not keep pushing the next probe out.
    clock.advance(200);
    outage.failed('heartbeat', enospc(), 'node heartbeat write failed');
    expect(outage.mayStart()).toBe(false);
    clock.advance(49);
    expect(outage.mayStart()).toBe(false);
    clock.advance(1);
    expect(outage.mayStart()).toBe(true);
    outage.started();
    expect(outage.mayStart()).toBe(false);
    outage.ended();
    outage.failed('pass', enospc(), 'distributor pass failed');
    expect(outage.succeeded('pass')).toBe(false); // a pass that lists proves no write
    expect(outage.isFailing).toBe(true);
    expect(outage.succeeded('heartbeat')).toBe(true);
    expect(outage.view()).toBeUndefined();
    expect(outage.mayStart()).toBe(true);
    outage.started();
    outage.started();
    expect(outage.mayStart()).toBe(true);
  });

  it('says since when and with which errno, leaving out the place that writes the view', () => {
    const clock = new FakeClock();
    const outage = new StoreOutage(clock, () => 1000);
    const firstAt = clock.now();
    outage.failed('push', enospc(), 'push job failed');
    clock.advance(5000);
    outage.failed('heartbeat', Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }), 'node heartbeat write failed');
    expect(outage.view()).toEqual({ code: 'ENOSPC', sinceAt: firstAt, failures: 2, lastError: 'ENOSPC: no space left on device, write' });
    expect(outage.view('push')).toMatchObject({ code: 'EIO', sinceAt: firstAt });
    outage.succeeded('push');
    expect(outage.view()).toBeUndefined();
  });

  it('lets a probe start at once when only the node heartbeat failed', () => {
    const clock = new FakeClock();
    const outage = new StoreOutage(clock, () => 1000);
    for (let i = 0; i < 5; i++) outage.failed('heartbeat', enospc(), 'node heartbeat write failed');
    expect(outage.isFailing).toBe(true);
    expect(outage.mayStart()).toBe(true);
  });

  it("ignores errors that are not the store's", () => {
    const outage = new StoreOutage(new FakeClock(), () => 1000);
    expect(outage.failed('push', new Error('a bug'), 'push job failed')).toBeUndefined();
    expect(outage.isFailing).toBe(false);
  });
});

describe('a distributor whose store is full', () => {
  function recordingLog(): Log & { lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> } {
    const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
    const at = (level: string) => (fields: object, msg?: string) => void lines.push({ level, msg: msg ?? '', fields: fields as Record<string, unknown> });
    return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  }

  it('logs the first failed job and then one line a minute with the count, starts one probe per backoff, and resumes everything once a lock can be written', async () => {
    const h = harness(
      [
        'replication.distributionInterval=1s',
        'replication.randomDelay=0',
        'remote.mirror.url=/dest/mirror/${name}.git',
        'remote.mirror.replicationDelay=0',
        'remote.mirror.threads=4',
      ],
      { random: 0 },
    );
    for (const project of ['a', 'b', 'c', 'd']) await h.enqueue(project, ['refs/heads/main']);
    let full = true;
    let attempts = 0;
    const locks = {
      acquire: async (lockName: string, uri: string) => {
        attempts++;
        if (full) throw new StoreError(`write owner record failed (ENOSPC) at /store/ref-updates/running/${lockName}`, { cause: enospc() });
        return h.locks.acquire(lockName, uri);
      },
    };
    const log = recordingLog();
    const distributor = new Distributor({ ...h.deps, locks, log });
    h.clock.advance(1000);

    expect((await distributor.tick()).started).toBe(4);
    await distributor.whenIdle();
    const failedLines = (): Array<Record<string, unknown>> => log.lines.filter((line) => line.msg === 'push job failed').map((line) => line.fields);
    expect(failedLines()).toHaveLength(1);
    expect(failedLines()[0]).toMatchObject({ code: 'ENOSPC', suppressed: 0 });

    // 90 s of passes, ten a second: one probe a second at most, one more line after a minute.
    let started = 0;
    for (let i = 0; i < 900; i++) {
      h.clock.advance(100);
      started += (await distributor.tick()).started;
      await distributor.whenIdle();
    }
    expect(started).toBeGreaterThanOrEqual(85);
    expect(started).toBeLessThanOrEqual(91);
    expect(attempts).toBe(4 + started);
    expect(failedLines()).toHaveLength(2);
    // Left out: the other three jobs of the first pass, and the 59 probes of the minute after.
    expect(failedLines()[1]).toMatchObject({ code: 'ENOSPC', suppressed: 3 + 59 });

    full = false;
    for (let i = 0; i < 20 && (await h.store.listWaitingNames()).length > 0; i++) {
      h.clock.advance(100);
      await distributor.tick();
      await distributor.whenIdle();
    }
    expect(await h.store.listWaitingNames()).toEqual([]);
    expect(h.pusher.requests).toHaveLength(4);
    expect(log.lines.filter((line) => line.msg === 'the store works again')).toHaveLength(1);
    expect(distributor.storeOutage.view()).toBeUndefined();
  });
});
