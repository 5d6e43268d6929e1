import { describe, expect, it } from 'vitest';
import { parseBootId, parseCmdline, parseProcStat } from '../../../src/runtime/process-identity.js';

// Captured from Linux 6.x: `sleep 30`, and a copy of sleep named "we ird) (x".
const SLEEP_STAT =
  '7327 (sleep) R 7315 7315 4276 0 -1 4194304 116 0 0 0 0 0 0 0 20 0 1 0 25756 2592768 325 18446744073709551615 93867420397568 93867420415497 140722051666064 0 0 0 0 6 0 0 0 0 17 0 0 0 0 0 0 93867420429584 93867420430848 93867718209536 140722051672806 140722051672815 140722051672815 140722051674089 0\n';
const ODD_COMM_STAT =
  '7319 (we ird) (x) S 7318 7315 4276 0 -1 4194304 131 0 0 0 0 0 0 0 20 0 1 0 25735 2990080 408 18446744073709551615 94468605976576 94468605994505 140726525224576 0 0 0 0 6 0 1 0 0 17 0 0 0 0 0 0 94468606008592 94468606009856 94469577666560 140726525229787 140726525229805 140726525229805 140726525231080 0\n';

describe('parseProcStat', () => {
  it('reads the state, the parent pid (field 4), the process group (field 5) and the start time (field 22)', () => {
    expect(parseProcStat(SLEEP_STAT)).toEqual({ state: 'R', ppid: 7315, pgrp: 7315, startTime: 25756 });
  });

  it('counts fields from the last ")": a command name with spaces and parentheses does not shift them', () => {
    expect(parseProcStat(ODD_COMM_STAT)).toEqual({ state: 'S', ppid: 7318, pgrp: 7315, startTime: 25735 });
  });

  it('a command name made to look like fields cannot pass for them', () => {
    const forged = '9 (x) Z 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 999) S 1 42 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 555 0 0\n';
    expect(parseProcStat(forged)).toEqual({ state: 'S', ppid: 1, pgrp: 42, startTime: 555 });
  });

  it('gives undefined for text that is not a stat line: no ")", too few fields, a non-number where a number belongs', () => {
    expect(parseProcStat('')).toBeUndefined();
    expect(parseProcStat('7327 sleep R 7315 7315')).toBeUndefined();
    expect(parseProcStat('7327 (sleep) R 7315 7315 4276')).toBeUndefined();
    expect(parseProcStat(SLEEP_STAT.replace(' 25756 ', ' 2.5e4 '))).toBeUndefined();
    expect(parseProcStat(SLEEP_STAT.replace(' 25756 ', ' 99999999999999999 '))).toBeUndefined();
    expect(parseProcStat(SLEEP_STAT.replace(') R ', ') ?? '))).toBeUndefined();
  });
});

describe('parseCmdline', () => {
  it('splits the NUL-ended arguments', () => {
    expect(parseCmdline('git\0push\0--porcelain\0--\0git://h/app.git\0')).toEqual(['git', 'push', '--porcelain', '--', 'git://h/app.git']);
    expect(parseCmdline('/tmp/we ird) (x\x005\0')).toEqual(['/tmp/we ird) (x', '5']);
  });

  it('is empty for a zombie or a kernel thread, and keeps a last argument cut short by the read cap', () => {
    expect(parseCmdline('')).toEqual([]);
    expect(parseCmdline('git\0push\0refs/hea')).toEqual(['git', 'push', 'refs/hea']);
  });
});

describe('parseBootId', () => {
  it('reads the UUID without its newline', () => {
    expect(parseBootId('720ae816-d705-4e9f-8c69-e786ecd42689\n')).toBe('720ae816-d705-4e9f-8c69-e786ecd42689');
  });

  it('gives undefined for anything that is not one UUID', () => {
    expect(parseBootId('')).toBeUndefined();
    expect(parseBootId('not-a-boot-id')).toBeUndefined();
    expect(parseBootId('720ae816-d705-4e9f-8c69-e786ecd42689\n720ae816-d705-4e9f-8c69-e786ecd42689\n')).toBeUndefined();
  });
});
