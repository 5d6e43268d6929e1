import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hermeticPusher, makeSource, remoteConfig, type Source } from './push-fixtures.js';
import { startHttpStatusFake, type Loopback } from './loopback-fakes.js';

let scratch: string;
let http: Loopback;
let source: Source;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'refrelay-http-'));
  http = await startHttpStatusFake();
  source = makeSource(join(scratch, 'src'));
});

afterAll(async () => {
  await http?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('GitPusher keeps credentials out of everything it reports', () => {
  it.each([
    [503, 'overloaded', true],
    [401, 'auth', true],
  ] as const)('HTTP %i is %s, and the password appears in neither argv, message nor stderr tail', async (status, kind, retryable) => {
    const uri = `http://bot:s3cret@127.0.0.1:${http.port}/${status}/x.git`;
    const outcome = await hermeticPusher().push({ remote: remoteConfig(), uri, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind, retryable } });
    expect(outcome.argv).toContain(`http://bot:***@127.0.0.1:${http.port}/${status}/x.git`);
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });
});

describe('GitPusher reads overload from smart-http', () => {
  it.each([429, 503])("HTTP %i is overload, with the server's Retry-After, and curl's trace stays out of what it reports", async (status) => {
    const uri = `http://bot:s3cret@127.0.0.1:${http.port}/${status}/x.git`;
    const outcome = await hermeticPusher().push({ remote: remoteConfig(), uri, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'overloaded', retryable: true, retryAfterMs: 7000 } });
    expect(outcome.failure?.message).toContain(String(status));
    expect(outcome.failure?.stderrTail).not.toMatch(/Recv header|http\.c:\d+/);
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });

  it('HTTP 500 is not overload', async () => {
    const outcome = await hermeticPusher().push({
      remote: remoteConfig(),
      uri: `http://127.0.0.1:${http.port}/500/x.git`,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(outcome.failure).toMatchObject({ kind: 'transient' });
    expect(outcome.failure?.retryAfterMs).toBeUndefined();
  });
});
