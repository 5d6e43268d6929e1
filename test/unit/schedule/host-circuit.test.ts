import { describe, expect, it } from 'vitest';
import { hostOf } from '../../../src/push/destination-host.js';
import { HostCircuits } from '../../../src/schedule/host-circuit.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';

describe('hostOf', () => {
  it.each([
    ['ssh://git@Mirror.example.com:2222/team/p.git', 'ssh://mirror.example.com:2222'],
    ['ssh://mirror.example.com/p.git', 'ssh://mirror.example.com'],
    ['git@mirror.example.com:team/p.git', 'ssh://mirror.example.com'],
    ['https://user:secret@mirror.example.com/p.git', 'https://mirror.example.com'],
    ['git://127.0.0.1:9418/p.git', 'git://127.0.0.1:9418'],
    ['file:///srv/mirror/p.git', 'local'],
    ['/srv/mirror/p.git', 'local'],
  ])('%s → %s (never the credentials)', (uri, host) => {
    expect(hostOf(uri)).toBe(host);
  });
});

describe('HostCircuits', () => {
  const refused = 'ssh: connect to host h port 22: Connection refused';

  it('opens after 5 different URIs fail within 60 s, not after 5 failures of one URI', () => {
    const clock = new FakeClock();
    const circuits = new HostCircuits(clock, new SeededRandom(1, 0));
    for (let i = 0; i < 6; i++) expect(circuits.connectionFailed('h', 'same', 30_000, refused)).toBe(false);
    for (let i = 1; i <= 3; i++) expect(circuits.connectionFailed('h', `u${i}`, 30_000, refused)).toBe(false);
    expect(circuits.connectionFailed('h', 'u4', 30_000, refused)).toBe(true); // 5 different URIs
    expect(circuits.gate('h')).toBe('blocked');
    expect(circuits.gate('other')).toBe('closed');
  });

  it('forgets failures older than the window', () => {
    const clock = new FakeClock();
    const circuits = new HostCircuits(clock, new SeededRandom(1, 0));
    for (let i = 0; i < 4; i++) circuits.connectionFailed('h', `u${i}`, 30_000, refused);
    clock.advance(61_000);
    expect(circuits.connectionFailed('h', 'u4', 30_000, refused)).toBe(false);
    expect(circuits.gate('h')).toBe('closed');
  });

  it('lets one probe through after the backoff, doubles the wait when it fails, closes when a push reaches the host', () => {
    const clock = new FakeClock();
    const circuits = new HostCircuits(clock, new SeededRandom(1, 0)); // jitter factor 0.75
    for (let i = 0; i < 5; i++) circuits.connectionFailed('h', `u${i}`, 40_000, refused);
    clock.advance(29_999);
    expect(circuits.gate('h')).toBe('blocked');
    clock.advance(1);
    expect(circuits.gate('h')).toBe('probe');
    circuits.beginProbe('h', 'u9');
    expect(circuits.gate('h')).toBe('blocked'); // one probe at a time
    expect(circuits.view()[0]).toMatchObject({ host: 'h', state: 'half-open', trips: 1 });
    expect(circuits.connectionFailed('h', 'u9', 40_000, refused)).toBe(true);
    clock.advance(59_999); // 40 s × 2 × 0.75
    expect(circuits.gate('h')).toBe('blocked');
    clock.advance(1);
    expect(circuits.gate('h')).toBe('probe');
    circuits.beginProbe('h', 'u7');
    circuits.reached('h');
    expect(circuits.gate('h')).toBe('closed');
    expect(circuits.anyOpen()).toBe(false);
  });

  it('frees the probe place when the probe ended without reaching git', () => {
    const clock = new FakeClock();
    const circuits = new HostCircuits(clock, new SeededRandom(1, 0));
    for (let i = 0; i < 5; i++) circuits.connectionFailed('h', `u${i}`, 1000, refused);
    clock.advance(1000);
    circuits.beginProbe('h', 'u1');
    circuits.probeAbandoned('h', 'u1');
    expect(circuits.gate('h')).toBe('probe');
  });
});
