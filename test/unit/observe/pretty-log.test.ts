import { describe, expect, it } from 'vitest';
import { prettyLine } from '../../../src/observe/pretty-log.js';

describe('prettyLine', () => {
  it('puts time, level and message first, then the other fields as key=value', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-11-22T06:30:52.184Z',
      node: 'n1',
      pushId: 'n1.ab.1',
      remote: 'dr',
      uri: 'ssh://bot:***@h/p.git',
      outcomes: { new: 1 },
      msg: 'pushed',
    });
    expect(prettyLine(line, false)).toBe('06:30:52.184 INFO  pushed  pushId=n1.ab.1 remote=dr uri=ssh://bot:***@h/p.git outcomes={"new":1}\n');
  });

  it('quotes values with spaces, colours the level on a terminal, and passes a non-JSON line through', () => {
    const line = JSON.stringify({ level: 50, time: '2026-11-22T06:30:52.184Z', reason: 'connection refused', msg: 'task failed' });
    expect(prettyLine(line, false)).toBe('06:30:52.184 ERROR task failed  reason="connection refused"\n');
    expect(prettyLine(line, true)).toContain('\u001b[31mERROR\u001b[0m task failed');
    expect(prettyLine('not json', false)).toBe('not json');
  });
});
