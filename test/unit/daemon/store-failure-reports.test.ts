import { describe, expect, it } from 'vitest';
import type { Log } from '../../../src/runtime/log.js';
import {
  reportHeartbeatFailure,
  reportPassFailure,
  reportSpoolFailure,
  reportStoreWorks,
  storeHealthReason,
} from '../../../src/daemon/store-failure-reports.js';
import { StoreOutage } from '../../../src/schedule/store-outage.js';
import { FakeClock } from '../../support/fake-clock.js';

function recordingLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (_fields: object, msg?: string) => void lines.push(`${level} ${msg ?? ''}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe("the daemon's reports of a failing store", () => {
  it('logs a failing heartbeat and failing passes once a minute each, says "store not writable" with the errno and since when, and clears it when a heartbeat is written', () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const outage = new StoreOutage(clock, () => 1000);
    const log = recordingLog();
    for (let i = 0; i < 30; i++) {
      reportHeartbeatFailure(outage, log, enospc());
      reportPassFailure(outage, log, enospc());
      clock.advance(1000);
    }
    expect(log.lines).toEqual(['warn node heartbeat write failed', 'error distributor pass failed']);
    expect(storeHealthReason(outage.view())).toBe(
      'store not writable (ENOSPC) since 2026-01-01T12:00:00.000Z, 60 failures in a row: ENOSPC: no space left on device, write',
    );

    reportStoreWorks(outage, log, 'heartbeat');
    expect(storeHealthReason(outage.view())).toBeUndefined();
    expect(log.lines.at(-1)).toBe('info the store works again');
  });

  it("logs every failure that is not the store's, as before", () => {
    const outage = new StoreOutage(new FakeClock(), () => 1000);
    const log = recordingLog();
    reportPassFailure(outage, log, new Error('a bug'));
    reportPassFailure(outage, log, new Error('a bug'));
    expect(log.lines).toEqual(['error distributor pass failed', 'error distributor pass failed']);
    expect(outage.isFailing).toBe(false);
  });

  it('logs spooled tasks that cannot go into a failing store once a minute, beside the failed passes', () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const outage = new StoreOutage(clock, () => 1000);
    const log = recordingLog();
    for (let i = 0; i < 90; i++) {
      reportSpoolFailure(outage, log, enospc(), 3);
      clock.advance(1000);
    }
    expect(log.lines).toEqual(['warn could not forward spooled tasks into the store', 'warn could not forward spooled tasks into the store']);
    expect(outage.isFailing).toBe(true);
  });
});
