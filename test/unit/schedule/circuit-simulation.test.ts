import { describe, expect, it } from 'vitest';
import { simulate, type Dispatch } from './simulation.js';

const MINUTE = 60_000;
const REFUSED = 'ssh: connect to host dead.example.com port 22: Connection refused';
const HUNG_UP = 'fatal: the remote end hung up unexpectedly';

describe('host circuit breaker and backoff (2 simulated hours)', () => {
  it('probes a dead host with 1,000 URIs at most once per backoff window, spends no retries, and closes after one success', async () => {
    const backAt = 25 * MINUTE;
    const result = await simulate({
      remotes: [{ name: 'dead', backlog: 1000, finite: true }],
      maxPushes: 4,
      durationMs: 120 * MINUTE,
      seed: 11,
      extraConfig: ['remote.dead.replicationMaxRetries=3'],
      outcome: (_request, now) => (now - result0 < backAt ? REFUSED : true),
    });
    const failures = result.dispatches.filter((d) => !d.ok);
    // Before the circuit opens: at most the 5 URIs that trip it plus the pushes already running.
    const tripped = failures.slice(0, 5 + 4);
    const probes = failures.slice(tripped.length);
    const lastEarly = Math.max(...tripped.map((d) => d.startedAt));
    expect(probes.length).toBeGreaterThan(3);
    // Each probe waits the URI backoff formula keyed by the host: ≥ 0.75 × 30 s × 2^(n-1).
    let previous = lastEarly;
    for (const [n, probe] of probes.entries()) {
      expect(probe.startedAt - previous, `probe ${n + 1}`).toBeGreaterThanOrEqual(0.75 * 30_000 * 2 ** n - 1000);
      previous = probe.startedAt;
    }
    // No two probes overlap: one at a time.
    for (let i = 1; i < probes.length; i++) expect(probes[i]!.startedAt).toBeGreaterThanOrEqual(probes[i - 1]!.endsAt);
    // The retries of the host's URIs were not spent while it was down: nothing failed for good.
    expect(result.failed).toBe(0);
    // After the host came back, the first successful probe closes the circuit: the rest flows at full width.
    const firstSuccess = result.dispatches.filter((d) => d.ok).sort((a, b) => a.startedAt - b.startedAt)[0]!;
    expect(firstSuccess.startedAt).toBeGreaterThanOrEqual(backAt);
    const soonAfter = result.dispatches.filter((d) => d.startedAt >= firstSuccess.endsAt && d.startedAt < firstSuccess.endsAt + 2000);
    expect(soonAfter.length).toBeGreaterThanOrEqual(3);
    const delivered = new Set(result.dispatches.filter((d) => d.ok).map((d) => d.uri));
    expect(delivered.size).toBe(1000); // all of them, within the two hours
  }, 120_000);

  it('never dispatches a URI inside its backoff, whatever its share', async () => {
    const result = await simulate({
      remotes: [
        { name: 'flaky', backlog: 20, finite: true, shares: 1000 },
        { name: 'steady', backlog: 50 },
      ],
      maxPushes: 4,
      durationMs: 120 * MINUTE,
      seed: 12,
      outcome: (request, now) => (request.remote.name === 'flaky' && now - result0 < 20 * MINUTE ? HUNG_UP : true),
    });
    const byUri = new Map<string, Dispatch[]>();
    for (const d of result.dispatches.filter((d) => d.remote === 'flaky')) byUri.set(d.uri, [...(byUri.get(d.uri) ?? []), d]);
    let checked = 0;
    for (const attempts of byUri.values()) {
      attempts.sort((a, b) => a.startedAt - b.startedAt);
      for (let i = 1; i < attempts.length; i++) {
        const failuresBefore = attempts.slice(0, i).filter((d) => !d.ok).length;
        if (attempts[i - 1]!.ok) continue;
        expect(attempts[i]!.startedAt - attempts[i - 1]!.endsAt).toBeGreaterThanOrEqual(0.75 * 30_000 * 2 ** (failuresBefore - 1));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
    // Connection is fine (the remote hangs up): no circuit, every flaky URI delivered once it recovers.
    expect(new Set(result.dispatches.filter((d) => d.remote === 'flaky' && d.ok).map((d) => d.uri)).size).toBe(20);
  }, 120_000);
});

/** The simulation's clock starts here (FakeClock's default epoch). */
const result0 = Date.UTC(2026, 0, 1);
