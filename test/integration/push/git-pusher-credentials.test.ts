import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Credentials } from '../../../src/config/secure-config.js';
import { initBare, refsOf } from '../../support/git.js';
import { startGitHttpServer, type GitHttpServer } from '../../support/git-http.js';
import { hermeticPusher, makeSource, remoteConfig, type Source } from './push-fixtures.js';

const PASSWORD = 'pa55-w0rd!Secret';
let scratch: string;
let http: GitHttpServer;
let source: Source;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'refrelay-creds-'));
  mkdirSync(join(scratch, 'dest'));
  http = await startGitHttpServer(join(scratch, 'dest'), { username: 'replicator', password: PASSWORD });
  source = makeSource(join(scratch, 'src'), ['feature']);
});

afterAll(async () => {
  await http?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('HTTP(S) credentials from secure.config', () => {
  it('reach git through the askpass program: the push lands, and the password is in neither argv nor anything reported', async () => {
    const dest = initBare(join(scratch, 'dest', 'ok.git'));
    const pusher = hermeticPusher({}, { credentials: Credentials.of([['dest', { username: 'replicator', password: PASSWORD }]]) });
    const outcome = await pusher.push({
      remote: remoteConfig(),
      uri: http.url('ok.git'),
      localRepo: source.bare,
      refs: ['refs/heads/main', 'refs/heads/feature'],
    });
    expect(outcome).toMatchObject({ result: 'ok' });
    expect(refsOf(dest)).toEqual(source.refs());
    expect(http.logins).toContain(`replicator:${PASSWORD}`);
    expect(JSON.stringify(outcome)).not.toContain(PASSWORD);
    expect(outcome.argv.join(' ')).toBe(`git push --porcelain --no-verify --progress -- ${http.url('ok.git')} ${outcome.argv.slice(7).join(' ')}`);
  });

  it('a wrong password is an auth failure, and the password it tried appears nowhere in it', async () => {
    initBare(join(scratch, 'dest', 'denied.git'));
    const wrong = 'not-the-right-one-42';
    const pusher = hermeticPusher({}, { credentials: Credentials.of([['dest', { username: 'replicator', password: wrong }]]) });
    const outcome = await pusher.push({ remote: remoteConfig(), uri: http.url('denied.git'), localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'auth', retryable: true } });
    expect(JSON.stringify(outcome)).not.toContain(wrong);
  });

  it('without credentials for the remote git is not given any, and does not prompt', async () => {
    initBare(join(scratch, 'dest', 'none.git'));
    const pusher = hermeticPusher({}, { credentials: Credentials.of([['another-remote', { username: 'x', password: PASSWORD }]]) });
    const outcome = await pusher.push({ remote: remoteConfig(), uri: http.url('none.git'), localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'auth' } });
    expect(http.logins.filter((login) => login.startsWith('x:'))).toEqual([]);
  });
});

describe('one allowed git protocol per push', () => {
  it('an ext:: URL never runs its command: git refuses the transport and the push fails for good', async () => {
    const marker = join(scratch, 'ext-ran');
    const outcome = await hermeticPusher().push({
      remote: remoteConfig(),
      uri: `ext::sh -c touch% ${marker}`,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'permanent', retryable: false } });
    expect(existsSync(marker)).toBe(false);
  });

  it('a file:// push lands with only the file protocol allowed', async () => {
    const dest = initBare(join(scratch, 'plain.git'));
    const outcome = await hermeticPusher().push({ remote: remoteConfig(), uri: `file://${dest}`, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'ok' });
    expect(refsOf(dest).get('refs/heads/main')).toBe(source.refs().get('refs/heads/main'));
  });
});
