import { describe, expect, it } from 'vitest';
import { publishOrSpool, spoolReasonOf, spooledWarning } from '../../../src/cli/publish-or-spool.js';
import { StoreError } from '../../../src/errors.js';
import { StoreLayoutError, StoreMissingError } from '../../../src/store/store-marker.js';

/** A timer the test fires by hand: no real time passes. */
function manualTimer(): { after: (ms: number, action: () => void) => () => void; fire(): void; armedMs: number | undefined; cancelled: boolean } {
  const timer = {
    armedMs: undefined as number | undefined,
    cancelled: false,
    action: (): void => undefined,
    after(ms: number, action: () => void) {
      timer.armedMs = ms;
      timer.action = action;
      return () => {
        timer.cancelled = true;
      };
    },
    fire() {
      timer.action();
    },
  };
  return timer;
}

const errno = (code: string): Error => Object.assign(new Error(`${code}: failed`), { code });
const wrapped = (code: string): StoreError => new StoreError(`create task failed (${code}) at /store/x`, { cause: errno(code) });

describe('which store failures enqueue spools', () => {
  it('spools a missing store marker, a store awaiting its layout upgrade, a full, over-quota or read-only store, I/O errors and stale NFS handles', () => {
    expect(spoolReasonOf(new StoreMissingError('/store', 'refrelay-store.json is missing'))).toBe('refrelay-store.json is missing');
    expect(spoolReasonOf(new StoreError('create task failed', { cause: new StoreLayoutError('/store', 1) }))).toBe(
      'it has layout 1, until `refrelay init --upgrade` has run',
    );
    for (const code of ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO']) expect(spoolReasonOf(wrapped(code))).toBe(code);
    // libuv has no name for ESTALE: Node reports errno -116 with an "Unknown system error" code.
    expect(spoolReasonOf(new StoreError('x', { cause: Object.assign(new Error('stale'), { code: 'Unknown system error -116', errno: -116 }) }))).toBe('ESTALE');
  });

  it('does not spool what an operator must fix: permissions, a damaged marker, anything else', () => {
    expect(spoolReasonOf(wrapped('EACCES'))).toBeUndefined();
    expect(spoolReasonOf(new StoreError('the store marker /store/refrelay-store.json is damaged'))).toBeUndefined();
    expect(spoolReasonOf(new Error('boom'))).toBeUndefined();
  });
});

describe('publishOrSpool', () => {
  const base = { storePath: '/store', spoolAfterMs: 5000 };

  it('stores when the store answers in time, and spools nothing', async () => {
    const timer = manualTimer();
    let spooled = 0;
    const outcome = await publishOrSpool({ ...base, timers: timer, publish: async () => 'ok', spool: async () => `${++spooled}` });
    expect(outcome).toEqual({ kind: 'stored', result: 'ok' });
    expect(spooled).toBe(0);
    expect(timer.armedMs).toBe(5000);
    expect(timer.cancelled).toBe(true);
  });

  it('spools on a spoolable failure, with its reason', async () => {
    const outcome = await publishOrSpool({ ...base, timers: manualTimer(), publish: () => Promise.reject(wrapped('ENOSPC')), spool: async () => '/spool/abc' });
    expect(outcome).toEqual({ kind: 'spooled', reason: 'ENOSPC', spoolDir: '/spool/abc' });
  });

  it('spools when the store has not answered within spoolAfter; a late failure of that write is ignored', async () => {
    const timer = manualTimer();
    let failLate: (error: Error) => void = () => undefined;
    const hanging = new Promise<string>((_, reject) => (failLate = reject));
    const pending = publishOrSpool({ ...base, timers: timer, publish: () => hanging, spool: async () => '/spool/abc' });
    timer.fire();
    expect(await pending).toEqual({ kind: 'spooled', reason: 'no answer within 5s', spoolDir: '/spool/abc' });
    failLate(errno('EIO'));
    await Promise.resolve();
  });

  it('rethrows a failure it does not spool, without touching the spool', async () => {
    let spooled = false;
    const publish = (): Promise<string> => Promise.reject(wrapped('EACCES'));
    await expect(publishOrSpool({ ...base, timers: manualTimer(), publish, spool: async () => ((spooled = true), '/s') })).rejects.toThrow(/EACCES/);
    expect(spooled).toBe(false);
  });

  it('fails naming both errors when the spool cannot be written either', async () => {
    const spool = (): Promise<string> =>
      Promise.reject(Object.assign(new Error("ENOSPC: no space left on device, open '/spool/abc/x.tmp'"), { code: 'ENOSPC' }));
    const failure = publishOrSpool({ ...base, timers: manualTimer(), publish: () => Promise.reject(wrapped('EROFS')), spool });
    await expect(failure).rejects.toThrow(StoreError);
    await expect(failure).rejects.toThrow(
      /^create task failed \(EROFS\) at \/store\/x; and the update could not be spooled locally either: ENOSPC: no space left on device/,
    );
  });

  it('words the warning as enqueue prints it', () => {
    expect(spooledWarning('/store', 'ENOSPC', '/spool/abc')).toBe(
      'refrelay: the store at /store cannot be written (ENOSPC); the update is spooled in /spool/abc and will be forwarded by a daemon of this store on this machine\n',
    );
  });
});
