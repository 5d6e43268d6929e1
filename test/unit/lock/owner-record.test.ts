import { describe, expect, it } from 'vitest';
import { parseOwnerRecord } from '../../../src/lock/owner-record.js';

const base = { version: 1, nodeId: 'node-1', pid: 77, host: 'h', leaseId: 'node-1.abc', counter: 3, uri: 'git://h/app.git', acquiredAt: 1, heartbeatAt: 2 };

function parsed(extra: Record<string, unknown>) {
  return parseOwnerRecord(JSON.stringify({ ...base, ...extra }));
}

describe('parseOwnerRecord: the push process fields of a record from the shared store', () => {
  it('keeps a pid, start time and boot id that can be real', () => {
    expect(parsed({ pushPid: 4242, pushStartTime: 25756, bootId: '720ae816-d705-4e9f-8c69-e786ecd42689' })).toMatchObject({
      pushPid: 4242,
      pushStartTime: 25756,
      bootId: '720ae816-d705-4e9f-8c69-e786ecd42689',
    });
  });

  it('drops numbers that cannot be a pid or a start time: zero, negative, fractional, unsafe, strings', () => {
    for (const value of [0, -1, 1.5, 2 ** 60, '4242', null, true]) {
      const record = parsed({ pushPid: value, pushStartTime: value });
      expect(record).toBeDefined();
      expect(record).not.toHaveProperty('pushPid');
      expect(record).not.toHaveProperty('pushStartTime');
    }
  });

  it('drops a boot id that is empty, too long or not a string', () => {
    for (const value of ['', 'x'.repeat(65), 42, {}]) expect(parsed({ bootId: value })).not.toHaveProperty('bootId');
  });

  it('a record of the earlier version (pushPid only) parses without start time or boot id', () => {
    const record = parsed({ pushPid: 4242 });
    expect(record?.pushPid).toBe(4242);
    expect(record?.pushStartTime).toBeUndefined();
    expect(record?.bootId).toBeUndefined();
  });
});
