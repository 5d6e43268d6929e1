import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../src/push/git-pusher.js';
import { classifyPushFailure, isOverload } from '../../../src/push/failure-class.js';
import { FAILURE_POLICY } from '../../../src/push/failure-policy.js';
import { HostPacing } from '../../../src/schedule/host-pacing.js';
import { FakeClock } from '../../support/fake-clock.js';

describe('HostPacing (AIMD per destination host)', () => {
  it('leaves a host that never signalled overload alone', () => {
    const pacing = new HostPacing(new FakeClock());
    expect(pacing.allows('h', 100)).toBe(true);
    pacing.succeeded('h');
    expect(pacing.any()).toBe(false);
  });

  it('halves the pushes at once on overload (not below 1) and spaces starts 250 ms × 1.5; a burst within 500 ms counts once', () => {
    const clock = new FakeClock();
    const pacing = new HostPacing(clock);
    pacing.overloaded('h', 8);
    pacing.overloaded('h', 8); // same burst
    expect(pacing.view()).toEqual([{ host: 'h', window: 4, spacingMs: 375, retryAfterMs: null }]);
    expect(pacing.allows('h', 3)).toBe(true);
    expect(pacing.allows('h', 4)).toBe(false);
    pacing.started('h');
    clock.advance(374);
    expect(pacing.allows('h', 0)).toBe(false);
    clock.advance(1);
    expect(pacing.allows('h', 0)).toBe(true);
    for (let i = 0; i < 5; i++) {
      clock.advance(600);
      pacing.overloaded('h', 4);
    }
    expect(pacing.view()[0]!.window).toBe(1);
  });

  it('honours Retry-After: no push starts before it has passed', () => {
    const clock = new FakeClock();
    const pacing = new HostPacing(clock);
    pacing.overloaded('h', 2, 10_000);
    expect(pacing.view()[0]).toMatchObject({ window: 1, retryAfterMs: 10_000 });
    expect(pacing.view()[0]!.spacingMs).toBeGreaterThanOrEqual(10_000);
    clock.advance(9999);
    expect(pacing.allows('h', 0)).toBe(false);
  });

  it('recovers additively on success and forgets the host once back at full width with no spacing', () => {
    const clock = new FakeClock();
    const pacing = new HostPacing(clock);
    pacing.overloaded('h', 4); // window 2, spacing 375
    clock.advance(100);
    pacing.succeeded('h'); // spacing 125
    expect(pacing.view()[0]).toMatchObject({ window: 2, spacingMs: 125 });
    clock.advance(100);
    pacing.succeeded('h'); // 2 successes at window 2: window 3; spacing 0
    expect(pacing.view()[0]).toMatchObject({ window: 3, spacingMs: 0 });
    for (let i = 0; i < 3; i++) {
      clock.advance(100);
      pacing.succeeded('h');
    }
    expect(pacing.any()).toBe(false);
  });
});

describe('overload signals in git output', () => {
  it.each([
    ['error: RPC failed; HTTP 429 curl 22 The requested URL returned error: 429', true],
    ["fatal: unable to access 'https://h/r.git/': The requested URL returned error: 503", true],
    ['kex_exchange_identification: read: Connection reset by peer', true],
    ['kex_exchange_identification: Connection closed by remote host', true],
    ["fatal: unable to access 'https://h/r.git/': The requested URL returned error: 500", false],
    ['ssh: connect to host h port 22: Connection refused', false],
  ])('%s → overload %s', (line, overload) => {
    expect(isOverload(line)).toBe(overload);
  });

  it('does not count an ssh MaxStartups drop as a dead host (circuit), only as overload', () => {
    const hostEffect = (stderr: string) => FAILURE_POLICY[classifyPushFailure(255, stderr).kind].host;
    expect(hostEffect('kex_exchange_identification: Connection closed by remote host')).toBe('overloaded');
    expect(hostEffect('ssh: connect to host h port 22: Connection refused')).toBe('connection-failed');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:30 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT'))).toBe(30_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
