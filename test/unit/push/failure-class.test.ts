import { describe, expect, it } from 'vitest';
import { classifyPushFailure, stderrTail } from '../../../src/push/failure-class.js';
import type { FailureKind } from '../../../src/push/failure-policy.js';
import { captured } from './captured.js';

/** Fixture name → expected class, and a piece of the line that should explain it. */
const CAPTURED: readonly [string, FailureKind, string][] = [
  ['failure-file-missing-repository', 'missing-repository', 'does not appear to be a git repository'],
  ['failure-path-missing-repository', 'missing-repository', 'does not appear to be a git repository'],
  ['failure-git-daemon-no-such-repository', 'missing-repository', 'no such repository: /absent.git'],
  ['failure-ssh-missing-repository', 'missing-repository', 'does not appear to be a git repository'],
  ['failure-http-404-repository-not-found', 'missing-repository', 'Repository not found'],
  ['failure-git-connection-refused', 'unreachable', 'Connection refused'],
  ['failure-git-connection-reset', 'unreachable', 'Connection reset by peer'],
  ['failure-git-closed-without-answer', 'transient', 'Could not read from remote repository'],
  ['failure-git-remote-hung-up', 'transient', 'unexpected disconnect'],
  ['failure-git-unknown-host', 'unreachable', 'unable to look up nonexistent.invalid'],
  ['failure-ssh-connection-refused', 'unreachable', 'Connection refused'],
  ['failure-ssh-kex-reset', 'overloaded', 'kex_exchange_identification'],
  ['failure-ssh-kex-closed', 'overloaded', 'kex_exchange_identification'],
  ['failure-ssh-banner-timeout', 'unreachable', 'timed out during banner exchange'],
  ['failure-ssh-unknown-host', 'unreachable', 'Could not resolve hostname'],
  ['failure-http-500', 'transient', 'returned error: 500'],
  ['failure-http-502', 'transient', 'returned error: 502'],
  ['failure-http-503', 'overloaded', 'returned error: 503'],
  ['failure-http-429', 'overloaded', 'returned error: 429'],
  ['failure-ssh-permission-denied', 'auth', 'Permission denied (publickey)'],
  ['failure-http-401-no-credentials', 'auth', 'could not read Username'],
  ['failure-http-401-access-denied', 'auth', 'HTTP Basic: Access denied'],
  ['failure-http-403', 'auth', 'returned error: 403'],
  ['failure-unknown-scheme', 'permanent', "'remote-foo' is not a git command"],
  ['failure-transport-not-allowed', 'permanent', "transport 'file' not allowed"],
  ['failure-ext-not-allowed', 'permanent', "transport 'ext' not allowed"],
  ['failure-src-refspec-missing', 'permanent', 'src refspec refs/heads/gone does not match any'],
  ['porcelain-remote-lock-failed', 'transient', 'cannot lock ref'],
];

describe('classifyPushFailure on stderr captured from loopback servers', () => {
  it.each(CAPTURED)('%s is %s', (name, kind, because) => {
    const run = captured(name);
    const result = classifyPushFailure(run.exitCode, run.stderr);
    expect(result.kind).toBe(kind);
    expect(result.message).toContain(because);
    expect(result.message).not.toMatch(/\n/);
  });

  it('never puts a password from the URL into the message', () => {
    const run = captured('failure-http-401-access-denied');
    const withPassword = `${run.stderr}fatal: unable to access 'https://bot:hunter2@git.example.com/x.git/': The requested URL returned error: 401\n`;
    const result = classifyPushFailure(128, withPassword);
    expect(result.kind).toBe('auth');
    expect(result.message).not.toContain('hunter2');
    expect(classifyPushFailure(128, "fatal: unable to access 'https://bot:hunter2@h/x.git/': The requested URL returned error: 503").message).toBe(
      "fatal: unable to access 'https://bot:***@h/x.git/': The requested URL returned error: 503",
    );
  });
});

describe('classifyPushFailure on messages real servers print that loopback cannot reproduce', () => {
  it.each<[string, FailureKind]>([
    // ssh's default LogLevel adds this line (captured here without -o LogLevel=ERROR).
    [
      'kex_exchange_identification: Connection closed by remote host\nConnection closed by 127.0.0.1 port 23002\nfatal: Could not read from remote repository.',
      'overloaded',
    ],
    // GitHub over ssh (reported in vitorgalvao/tiny-scripts#179).
    [
      'ERROR: Repository not found.\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.',
      'missing-repository',
    ],
    // Old git over a proxy (MakerPress/atlas-public-feedback#125): the status wins over the generic hang-up.
    ['error: RPC failed; result=22, HTTP code = 502\nfatal: The remote end hung up unexpectedly', 'transient'],
    ['error: RPC failed; result=22, HTTP code = 413\nfatal: The remote end hung up unexpectedly', 'permanent'],
    ['error: RPC failed; HTTP 500 curl 22 The requested URL returned error: 500\nsend-pack: unexpected disconnect while reading sideband packet', 'transient'],
    ['error: RPC failed; curl 92 HTTP/2 stream 0 was not closed cleanly: CANCEL (err 8)\nfatal: the remote end hung up unexpectedly', 'transient'],
    ['remote: fatal: early EOF\nerror: unpack failed: index-pack abnormal exit', 'transient'],
    ['ssh: connect to host 10.255.255.1 port 22: Connection timed out', 'unreachable'],
    ['ssh: connect to host git.example.com port 22: Network is unreachable', 'unreachable'],
    ['fatal: Project not found: team/app\nfatal: Could not read from remote repository.', 'missing-repository'],
    ['FATAL: W any team/app bot DENIED by fallthru\n(or you mis-spelled the reponame)\nfatal: Could not read from remote repository.', 'auth'],
    ['fatal: remote error: access denied or repository not exported: /x.git', 'missing-repository'],
    ['Host key verification failed.\nfatal: Could not read from remote repository.', 'auth'],
    // Without --porcelain git prints receive-pack's per-ref answer on stderr (git 2.39, destination deleted by pre-receive).
    [
      "remote: fatal: Unable to read current working directory: No such file or directory        \nTo /tmp/refrelay-capture/dst.git\n ! [remote rejected] main -> main (unable to migrate objects to permanent storage)\nerror: failed to push some refs to '/tmp/refrelay-capture/dst.git'",
      'transient',
    ],
  ])('%s', (stderr, kind) => {
    expect(classifyPushFailure(128, stderr).kind).toBe(kind);
  });

  it('calls anything unknown permanent, with the first fatal line as the message', () => {
    expect(classifyPushFailure(128, 'warning: something\nfatal: protocol error: bad line length character: HTTP\n')).toEqual({
      kind: 'permanent',
      message: 'fatal: protocol error: bad line length character: HTTP',
    });
  });

  it('says so when git printed nothing', () => {
    expect(classifyPushFailure(1, '')).toEqual({ kind: 'permanent', message: 'git exited with code 1 and printed no error' });
  });
});

describe('stderrTail', () => {
  it('keeps the last lines, collapses progress redraws, and redacts passwords', () => {
    const stderr = ['a', 'b', 'Writing objects:  50% (1/2)\rWriting objects: 100% (2/2), done.', '', "fatal: unable to access 'https://u:pw@h/x/'"].join('\n');
    expect(stderrTail(stderr, 3)).toBe("b\nWriting objects: 100% (2/2), done.\nfatal: unable to access 'https://u:***@h/x/'");
  });
});
