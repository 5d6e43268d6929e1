import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refsOf, initBare } from '../../support/git.js';
import { sshdAvailable, startSshd, type Sshd } from '../../support/sshd.js';
import { SshConnectionReuse } from '../../../src/push/ssh-reuse.js';
import { groupAlive, hermeticPusher, lsRemote, makeSource, pick, processes, remoteConfig, waitForProcess } from './push-fixtures.js';

/** The master connections of one reuse directory: ssh renames itself "ssh: <socket> [mux]". */
function masters(reuse: SshConnectionReuse): number[] {
  return processes()
    .filter((p) => p.args.includes(reuse.dir) && p.args.includes('[mux]'))
    .map((p) => p.pid);
}

/**
 * Needs openssh-server (/usr/sbin/sshd) and root; scripts/test.sh does not
 * install it, so machines without it skip this file instead of failing.
 */
describe.skipIf(!sshdAvailable)('GitPusher over ssh (sshd on loopback)', () => {
  let scratch: string;
  let sshd: Sshd;
  let hung: Sshd;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'refrelay-ssh-'));
    sshd = await startSshd(join(scratch, 'sshd'));
    hung = await startSshd(join(scratch, 'hung'), { forcedCommand: 'sleep 600' });
  });

  afterAll(async () => {
    await sshd?.stop();
    await hung?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  let n = 0;
  function setup() {
    const root = join(scratch, `case-${++n}`);
    return { root, source: makeSource(root, ['b1']) };
  }

  it('pushes claimed refs to ssh:// so the destination holds the same ids', async () => {
    const { root, source } = setup();
    const dst = initBare(join(root, 'dst.git'));
    const pusher = hermeticPusher({ GIT_SSH_COMMAND: sshd.sshCommand });
    const refs = ['refs/heads/main', 'refs/heads/b1'];
    const outcome = await pusher.push({ remote: remoteConfig(), uri: sshd.url(dst), localRepo: source.bare, refs });
    expect(outcome).toMatchObject({ result: 'ok' });
    expect(lsRemote(sshd.url(dst), { GIT_SSH_COMMAND: sshd.sshCommand })).toEqual(pick(source.refs(), refs));
  });

  it('creates a missing destination over ssh (URL and scp-like forms) and then pushes', async () => {
    const { root, source } = setup();
    const refs = ['refs/heads/main', 'refs/heads/b1'];
    const remote = remoteConfig({ createMissingRepositories: true });

    const viaUrl = join(root, 'made', 'by url.git');
    const pusher = hermeticPusher({ GIT_SSH_COMMAND: sshd.sshCommand });
    const first = await pusher.push({ remote, uri: sshd.url(viaUrl), localRepo: source.bare, refs });
    expect(first).toMatchObject({ result: 'ok', createdRepository: true });
    expect(refsOf(viaUrl)).toEqual(pick(source.refs(), refs));

    // scp-like syntax has no port: it comes with the ssh command, as users configure it.
    const viaScp = join(root, 'made', 'scp.git');
    const withPort = hermeticPusher({ GIT_SSH_COMMAND: `${sshd.sshCommand} -p ${sshd.port}` });
    const second = await withPort.push({ remote, uri: `root@127.0.0.1:${viaScp}`, localRepo: source.bare, refs });
    expect(second).toMatchObject({ result: 'ok', createdRepository: true });
    expect(refsOf(viaScp)).toEqual(pick(source.refs(), refs));
  });

  it('reports a key the server does not accept as auth', async () => {
    const { root, source } = setup();
    const otherKey = join(root, 'other_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherKey]);
    const pusher = hermeticPusher({ GIT_SSH_COMMAND: sshd.sshCommand.replace(sshd.clientKey, otherKey) });
    const outcome = await pusher.push({
      remote: remoteConfig({ createMissingRepositories: true }),
      uri: sshd.url(join(root, 'x.git')),
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(outcome).toMatchObject({ result: 'failed', createdRepository: false, failure: { kind: 'auth' } });
    expect(outcome.failure?.message).toContain('Permission denied (publickey)');
    expect(existsSync(join(root, 'x.git'))).toBe(false);
  });

  it('stops a hung ssh destination after the timeout without progress and leaves no git or ssh process behind', async () => {
    const { root, source } = setup();
    const pusher = hermeticPusher({ GIT_SSH_COMMAND: hung.sshCommand });
    const started = performance.now();
    const pending = pusher.push({
      remote: remoteConfig({ timeoutMs: 2000 }),
      uri: hung.url(join(root, 'x.git')),
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    const git = await waitForProcess((p) => p.args.startsWith('git push --porcelain') && p.args.includes(root));
    const ssh = await waitForProcess((p) => p.pgid === git.pgid && p.args.includes(hung.clientKey));
    const outcome = await pending;
    const elapsed = performance.now() - started;

    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'timeout', retryable: true } });
    expect(outcome.failure?.message).toBe('no progress for 2 s (remote.dest.timeout); git and the processes it started (ssh) were stopped');
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(4000);
    expect(ssh.pid).not.toBe(git.pid);
    expect(groupAlive(git.pgid)).toBe(false);
    expect(processes().filter((p) => p.args.includes(hung.clientKey))).toEqual([]);
  });

  describe('with connection reuse (ControlMaster)', () => {
    it('pushes to many repositories of one host over a single master connection, and close() ends it and removes its directory', async () => {
      const source = makeSource(join(scratch, 'reuse'), ['b1']);
      const reuse = new SshConnectionReuse(scratch);
      const pusher = hermeticPusher({ GIT_SSH_COMMAND: sshd.sshCommand }, { sshConnectionReuse: reuse });
      const refs = ['refs/heads/main', 'refs/heads/b1'];
      const seen = new Set<number>();
      for (let i = 0; i < 5; i++) {
        const dst = initBare(join(scratch, 'reuse', `d${i}.git`));
        const outcome = await pusher.push({ remote: remoteConfig(), uri: sshd.url(dst), localRepo: source.bare, refs });
        expect(outcome).toMatchObject({ result: 'ok' });
        expect(refsOf(dst)).toEqual(pick(source.refs(), refs));
        for (const pid of masters(reuse)) seen.add(pid);
      }
      expect(seen.size).toBe(1); // one master, the same one for all five pushes
      await pusher.close();
      for (let i = 0; i < 50 && masters(reuse).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(masters(reuse)).toEqual([]);
      expect(existsSync(reuse.dir)).toBe(false);
    });

    it('ends the master of a hung host with the push stopped at its deadline: nothing is left running', async () => {
      const source = makeSource(join(scratch, 'hung'), []);
      const reuse = new SshConnectionReuse(scratch);
      const pusher = hermeticPusher({ GIT_SSH_COMMAND: hung.sshCommand }, { sshConnectionReuse: reuse });
      const outcome = await pusher.push({
        remote: remoteConfig({ timeoutMs: 1500 }),
        uri: hung.url(join(scratch, 'hung', 'x.git')),
        localRepo: source.bare,
        refs: ['refs/heads/main'],
      });
      expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'timeout' } });
      for (let i = 0; i < 50 && masters(reuse).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(masters(reuse)).toEqual([]);
      expect(processes().filter((p) => p.args.includes(hung.clientKey))).toEqual([]);
      await pusher.close();
    });
  });
});
