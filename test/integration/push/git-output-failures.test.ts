import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyPushFailure } from '../../../src/push/failure-class.js';
import type { FailureKind } from '../../../src/push/failure-policy.js';
import { freePort } from '../../support/free-port.js';
import { initBare, makeWorkTree } from '../../support/git.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { sshdAvailable, startSshd, type Sshd } from '../../support/sshd.js';
import { keep, runGit } from './git-capture.js';
import { startHttpStatusFake, startTcpFake, type Loopback, type TcpBehaviour } from './loopback-fakes.js';

/**
 * Every stderr the failure classifier is unit-tested on comes from here: real
 * git against real or deliberately broken loopback servers. Run with
 * REFRELAY_CAPTURE=1 to rewrite fixtures/git-output/failure-*.json.
 */
const sshClientAvailable = (process.env.PATH ?? '').split(':').some((dir) => existsSync(join(dir, 'ssh')));
const SSH_NO_CONFIG = 'ssh -F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=1';

let scratch: string;
let work: string;
let daemon: GitDaemon;
let sshd: Sshd | undefined;
let http: Loopback;
let closedPort: number;
const tcp = new Map<TcpBehaviour, Loopback>();

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'refrelay-failures-'));
  work = makeWorkTree(join(scratch, 'work'), 1);
  initBare(join(scratch, 'daemon', 'exists.git'));
  daemon = await startGitDaemon(join(scratch, 'daemon'));
  if (sshdAvailable) sshd = await startSshd(join(scratch, 'sshd'));
  http = await startHttpStatusFake();
  for (const behaviour of ['reset', 'close-after-request', 'silent', 'advertise-then-close'] as const) tcp.set(behaviour, await startTcpFake(behaviour));
  closedPort = await freePort();
});

afterAll(async () => {
  await daemon?.stop();
  await sshd?.stop();
  await http?.close();
  for (const server of tcp.values()) await server.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** What ssh prints for a connection dropped at key exchange varies with its version and timing; each of these is retried. */
const RETRIED_TRANSPORT: FailureKind[] = ['overloaded', 'unreachable', 'transient'];

const port = (behaviour: TcpBehaviour): number => tcp.get(behaviour)?.port ?? 0;

async function expectKind(
  name: string,
  description: string,
  url: string,
  kind: FailureKind | FailureKind[],
  env: Record<string, string> = {},
  refspec = 'refs/heads/main:refs/heads/main',
) {
  const run = keep(name, await runGit(work, ['push', '--porcelain', '--', url, refspec], description, env), scratch);
  expect(run.exitCode, run.stderr).not.toBe(0);
  const classified = classifyPushFailure(run.exitCode, run.stderr);
  expect([kind].flat(), run.stderr).toContain(classified.kind);
  return classified;
}

describe('git stderr from real failures is classified', () => {
  it('a missing file:// and plain-path repository is missing-repository', async () => {
    await expectKind('failure-file-missing-repository', 'file:// to a path that does not exist', `file://${scratch}/nope.git`, 'missing-repository');
    await expectKind('failure-path-missing-repository', 'plain path that does not exist', join(scratch, 'nope.git'), 'missing-repository');
  });

  it('git daemon: missing repository, refused, reset, silent close, hang-up mid-protocol, unknown host', async () => {
    await expectKind(
      'failure-git-daemon-no-such-repository',
      'git daemon --informative-errors, repository absent',
      daemon.url('absent.git'),
      'missing-repository',
    );
    await expectKind('failure-git-connection-refused', 'nothing listens on the port', `git://127.0.0.1:${closedPort}/x.git`, 'unreachable');
    await expectKind('failure-git-connection-reset', 'server resets the connection at once', `git://127.0.0.1:${port('reset')}/x.git`, 'unreachable');
    await expectKind(
      'failure-git-closed-without-answer',
      'server reads the request and closes',
      `git://127.0.0.1:${port('close-after-request')}/x.git`,
      'transient',
    );
    await expectKind(
      'failure-git-remote-hung-up',
      'server advertises receive-pack, then closes',
      `git://127.0.0.1:${port('advertise-then-close')}/x.git`,
      'transient',
    );
    await expectKind('failure-git-unknown-host', 'host name that cannot resolve', 'git://nonexistent.invalid/x.git', 'unreachable');
  });

  it.skipIf(!sshClientAvailable)(
    'ssh transport trouble is retried: refused, banner timeout, unknown host unreachable; reset, closed at key exchange retried (overloaded where ssh names the key exchange)',
    async () => {
      const env = { GIT_SSH_COMMAND: SSH_NO_CONFIG };
      await expectKind('failure-ssh-connection-refused', 'nothing listens on the port', `ssh://root@127.0.0.1:${closedPort}/x.git`, 'unreachable', env);
      await expectKind('failure-ssh-kex-reset', 'server resets before the banner', `ssh://root@127.0.0.1:${port('reset')}/x.git`, RETRIED_TRANSPORT, env);
      await expectKind(
        'failure-ssh-kex-closed',
        'server closes after the client banner',
        `ssh://root@127.0.0.1:${port('close-after-request')}/x.git`,
        RETRIED_TRANSPORT,
        env,
      );
      await expectKind(
        'failure-ssh-banner-timeout',
        'server accepts and never speaks (ConnectTimeout=1)',
        `ssh://root@127.0.0.1:${port('silent')}/x.git`,
        'unreachable',
        env,
      );
      await expectKind('failure-ssh-unknown-host', 'host name that cannot resolve', 'ssh://git@nonexistent.invalid/x.git', 'unreachable', env);
    },
  );

  it.skipIf(!sshdAvailable)('sshd: a wrong key is auth, a missing repository is missing-repository', async () => {
    const server = sshd as Sshd;
    const otherKey = join(scratch, 'other_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherKey]);
    const wrongKey = server.sshCommand.replace(server.clientKey, otherKey);
    await expectKind('failure-ssh-permission-denied', 'sshd does not know the client key', server.url(`${scratch}/x.git`), 'auth', {
      GIT_SSH_COMMAND: wrongKey,
    });
    await expectKind('failure-ssh-missing-repository', 'sshd login works, repository absent', server.url(`${scratch}/absent.git`), 'missing-repository', {
      GIT_SSH_COMMAND: server.sshCommand,
    });
  });

  it('http: 5xx are transient (503 and 429 overloaded), 401 and 403 auth, 404 missing-repository', async () => {
    const base = `http://127.0.0.1:${http.port}`;
    for (const status of [500, 502]) await expectKind(`failure-http-${status}`, `server answers ${status}`, `${base}/${status}/x.git`, 'transient');
    for (const status of [503, 429]) await expectKind(`failure-http-${status}`, `server answers ${status}`, `${base}/${status}/x.git`, 'overloaded');
    await expectKind('failure-http-401-no-credentials', '401 and no credentials to offer (prompts disabled)', `${base}/401/x.git`, 'auth');
    const withSecret = await expectKind(
      'failure-http-401-access-denied',
      '401 to a URL with user:password',
      `http://bot:s3cret@127.0.0.1:${http.port}/401/x.git`,
      'auth',
    );
    expect(withSecret.message).not.toContain('s3cret');
    await expectKind('failure-http-403', 'server answers 403', `${base}/403/x.git`, 'auth');
    await expectKind('failure-http-404-repository-not-found', '404 with a GitHub-like body', `${base}/404/x.git`, 'missing-repository');
  });

  it('unusable URLs and refspecs are permanent', async () => {
    await expectKind('failure-unknown-scheme', 'no remote helper for the scheme', 'foo://example.com/x.git', 'permanent');
    await expectKind('failure-transport-not-allowed', 'GIT_ALLOW_PROTOCOL excludes file', `file://${scratch}/x.git`, 'permanent', {
      GIT_ALLOW_PROTOCOL: 'ssh:git',
    });
    await expectKind('failure-ext-not-allowed', 'ext:: is off by default', 'ext::sh -c true', 'permanent');
    await expectKind(
      'failure-src-refspec-missing',
      'source ref does not exist (aborts the whole push)',
      daemon.url('exists.git'),
      'permanent',
      {},
      'refs/heads/gone:refs/heads/gone',
    );
  });
});
