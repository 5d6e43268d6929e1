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
    [503, 'transient', true],
    [401, 'auth', true],
  ] as const)('HTTP %i is %s, and the password appears in neither argv, message nor stderr tail', async (status, kind, retryable) => {
    const uri = `http://bot:s3cret@127.0.0.1:${http.port}/${status}/x.git`;
    const outcome = await hermeticPusher().push({ remote: remoteConfig(), uri, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind, retryable } });
    expect(outcome.argv).toContain(`http://bot:***@127.0.0.1:${http.port}/${status}/x.git`);
    expect(JSON.stringify(outcome)).not.toContain('s3cret');
  });
});
