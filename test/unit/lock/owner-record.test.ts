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

describe('parseOwnerRecord: records that are no owner record', () => {
  it('refuses text that is not a JSON object', () => {
    for (const text of ['', 'not json', '{"nodeId":', 'null', '42', '"owner"', '[]', JSON.stringify([base])])
      expect(parseOwnerRecord(text), text).toBeUndefined();
  });

  it('refuses a record without a string nodeId and leaseId and a numeric counter: nothing to judge staleness by', () => {
    for (const key of ['nodeId', 'leaseId', 'counter'] as const) {
      const { [key]: _dropped, ...rest } = base;
      expect(parseOwnerRecord(JSON.stringify(rest)), `without ${key}`).toBeUndefined();
    }
    expect(parsed({ nodeId: 7 })).toBeUndefined();
    expect(parsed({ leaseId: ['node-1.abc'] })).toBeUndefined();
    expect(parsed({ counter: '3' })).toBeUndefined();
    expect(parsed({ counter: null })).toBeUndefined();
  });

  it('keeps the fields it judges by exactly as written', () => {
    expect(parsed({})).toEqual({ ...base, version: 1 });
  });

  it('reads informational fields of the wrong type as empty, without refusing the record', () => {
    const record = parsed({ pid: 'many', host: 12, uri: {}, acquiredAt: 'yesterday', heartbeatAt: null });
    expect(record).toMatchObject({ nodeId: 'node-1', leaseId: 'node-1.abc', counter: 3, pid: 0, host: '', uri: '', acquiredAt: 0, heartbeatAt: 0 });
  });

  it('keeps no field a record adds beyond the known ones, and no version but its own', () => {
    const record = parseOwnerRecord(
      `{"version":99,"nodeId":"node-1","leaseId":"node-1.abc","counter":3,"extra":"x","constructor":"y","__proto__":{"polluted":true}}`,
    );
    expect(record?.version).toBe(1);
    expect(Object.keys(record!).sort()).toEqual(['acquiredAt', 'counter', 'heartbeatAt', 'host', 'leaseId', 'nodeId', 'pid', 'uri', 'version']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
