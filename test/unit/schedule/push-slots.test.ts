import { describe, expect, it } from 'vitest';
import { PushSlots } from '../../../src/schedule/push-slots.js';

const never = new AbortController().signal;

describe('PushSlots', () => {
  it('gives a remote at most its limit of slots and hands a freed one to the longest waiter', async () => {
    const slots = new PushSlots();
    const [a, b, c] = [0, 1, 2].map(() => slots.slot('mirror', () => 1));
    expect(await a!.acquire(never)).toBe(true);
    const order: string[] = [];
    const waitB = b!.acquire(never).then((granted) => order.push(`b:${granted}`));
    const waitC = c!.acquire(never).then((granted) => order.push(`c:${granted}`));
    await Promise.resolve();
    expect(order).toEqual([]);
    expect(slots.busy('mirror')).toBe(1);
    a!.release();
    a!.release(); // twice is once
    await waitB;
    expect(order).toEqual(['b:true']);
    expect(slots.busy('mirror')).toBe(1);
    b!.release();
    await waitC;
    expect(order).toEqual(['b:true', 'c:true']);
  });

  it('keeps remotes apart', async () => {
    const slots = new PushSlots();
    expect(await slots.slot('mirror', () => 1).acquire(never)).toBe(true);
    expect(await slots.slot('dr', () => 1).acquire(never)).toBe(true);
    expect([slots.busy('mirror'), slots.busy('dr')]).toEqual([1, 1]);
  });

  it('answers false to a waiter whose job stops, and skips it when a slot frees', async () => {
    const slots = new PushSlots();
    const holder = slots.slot('mirror', () => 1);
    await holder.acquire(never);
    const stop = new AbortController();
    const stopped = slots.slot('mirror', () => 1);
    const stoppedWait = stopped.acquire(stop.signal);
    const next = slots.slot('mirror', () => 1);
    const nextWait = next.acquire(never);
    stop.abort();
    expect(await stoppedWait).toBe(false);
    holder.release();
    expect(await nextWait).toBe(true);
    expect(slots.busy('mirror')).toBe(1);
    stopped.release(); // a released waiter gives back nothing it never had
    expect(slots.busy('mirror')).toBe(1);
  });

  it('keeps a granted slot when the signal aborts later; release frees it once', async () => {
    const slots = new PushSlots();
    const stop = new AbortController();
    const holder = slots.slot('mirror', () => 1);
    expect(await holder.acquire(stop.signal)).toBe(true);
    stop.abort();
    expect(slots.busy('mirror')).toBe(1);
    expect(await holder.acquire(stop.signal)).toBe(true);
    holder.release();
    holder.release();
    expect([slots.busy('mirror'), slots.total]).toEqual([0, 0]);
  });

  it('lets a waiter leave by releasing, and refuses an already aborted job at once', async () => {
    const slots = new PushSlots();
    const holder = slots.slot('mirror', () => 1);
    await holder.acquire(never);
    const leaving = slots.slot('mirror', () => 1);
    const leavingWait = leaving.acquire(never);
    leaving.release();
    expect(await leavingWait).toBe(false);
    const aborted = new AbortController();
    aborted.abort();
    expect(await slots.slot('mirror', () => 1).acquire(aborted.signal)).toBe(false);
    holder.release();
    expect(slots.busy('mirror')).toBe(0);
  });

  it('reads the limit on every grant, so a reloaded threads setting applies to the next push', async () => {
    const slots = new PushSlots();
    let limit = 1;
    const [a, b] = [0, 1].map(() => slots.slot('mirror', () => limit));
    await a!.acquire(never);
    limit = 2;
    expect(await b!.acquire(never)).toBe(true);
    expect(slots.busy('mirror')).toBe(2);
  });
});

describe('PushSlots node-wide limit', () => {
  it('never grants more than maxPushes slots over all remotes, and hands a freed one on', async () => {
    let maxPushes = 2;
    const slots = new PushSlots({ nodeLimit: () => maxPushes });
    const a = slots.slot('mirror', () => 5);
    const b = slots.slot('dr', () => 5);
    const c = slots.slot('ci', () => 5);
    expect(await a.acquire(never)).toBe(true);
    expect(await b.acquire(never)).toBe(true);
    let cGranted = false;
    const waitC = c.acquire(never).then((granted) => (cGranted = granted));
    await Promise.resolve();
    expect(cGranted).toBe(false);
    expect(slots.total).toBe(2);
    a.release();
    await waitC;
    expect(cGranted).toBe(true);
    expect(slots.total).toBe(2);
    maxPushes = 3; // a reloaded config applies at the next grant
    expect(await slots.slot('mirror', () => 5).acquire(never)).toBe(true);
    expect(slots.total).toBe(3);
  });
});
