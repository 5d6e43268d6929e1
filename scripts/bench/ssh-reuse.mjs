// 200 consecutive pushes to repositories of one ssh destination host (an sshd on loopback): wall
// time with one shared master connection (ControlMaster, replication.sshConnectionReuse) against a
// handshake per push, in the same run. Target: well under 0.7×.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { GitPusher } from '../../dist/push/git-pusher.js';
import { SshConnectionReuse } from '../../dist/push/ssh-reuse.js';
import { bareRepo, makeSource } from './cluster-util.mjs';
import { fmt, withTempDir } from './util.mjs';

const SSHD = '/usr/sbin/sshd';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startSshd(dir) {
  mkdirSync(dir, { recursive: true });
  mkdirSync('/run/sshd', { recursive: true });
  const hostKey = join(dir, 'host_ed25519');
  const clientKey = join(dir, 'client_ed25519');
  for (const key of [hostKey, clientKey]) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`), { mode: 0o600 });
  const port = await freePort();
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PubkeyAuthentication yes',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'StrictModes no',
      'LogLevel ERROR',
      'MaxStartups 100',
      '',
    ].join('\n'),
  );
  const child = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: 'ignore' });
  for (const deadline = Date.now() + 10_000; ;) {
    const up = await new Promise((resolve) => {
      const socket = createServer().listen(port, '127.0.0.1');
      socket.once('listening', () => socket.close(() => resolve(false)));
      socket.once('error', () => resolve(true));
    });
    if (up) break;
    if (Date.now() > deadline) throw new Error('sshd did not start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: (path) => `ssh://root@127.0.0.1:${port}${path}`,
    sshCommand: `ssh -F /dev/null -i ${clientKey} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
    stop: () => child.kill('SIGKILL'),
  };
}

const remote = {
  name: 'ssh',
  urls: [],
  push: [{ force: true, src: 'refs/*', dst: 'refs/*', text: '+refs/*:refs/*' }],
  projects: [],
  excludeProjects: [],
  threads: 1,
  replicationDelayMs: 0,
  rescheduleDelayMs: 3000,
  replicationRetryMs: 60_000,
  replicationMaxRetries: 0,
  timeoutMs: 60_000,
  mirror: false,
  createMissingRepositories: false,
  excludedRefsPatterns: [],
  remoteNameStyle: 'slash',
  shares: 100,
};

async function pushAll(pusher, source, urls) {
  const started = performance.now();
  for (const url of urls) {
    const outcome = await pusher.push({ remote, uri: url, localRepo: source, refs: ['refs/heads/main'] });
    if (outcome.result !== 'ok') throw new Error(`push to ${url} failed: ${outcome.failure?.message}`);
  }
  return performance.now() - started;
}

export async function run({ quick }) {
  if (!existsSync(SSHD) || process.getuid?.() !== 0) {
    return { pass: false, summary: `skipped: needs ${SSHD} and root (scripts/test.sh installs openssh-server)`, details: [] };
  }
  const pushes = quick ? 40 : 200;
  return withTempDir('sshreuse', async (root) => {
    const sshd = await startSshd(join(root, 'sshd'));
    try {
      const { repo: source } = makeSource(root, 'src', 0);
      const urls = (label) =>
        Array.from({ length: pushes }, (_, i) => {
          const path = join(root, label, `r${i}.git`);
          bareRepo(path);
          return sshd.url(path);
        });
      const env = { GIT_SSH_COMMAND: sshd.sshCommand, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
      const plainUrls = urls('plain');
      const reuseUrls = urls('reuse');
      const plainMs = await pushAll(new GitPusher({ env }), source, plainUrls);
      const reuse = new SshConnectionReuse(root);
      const reusing = new GitPusher({ env, sshConnectionReuse: reuse });
      const reuseMs = await pushAll(reusing, source, reuseUrls);
      await reusing.close();
      const ratio = reuseMs / plainMs;
      return {
        pass: ratio < 0.7,
        summary: `${pushes} consecutive pushes to one ssh host: ${ratio.toFixed(2)}× the wall time with one shared connection (target well under 0.7×)`,
        details: [
          `a handshake per push: ${fmt(plainMs)} (${(plainMs / pushes).toFixed(1)} ms each); one master connection: ${fmt(reuseMs)} (${(reuseMs / pushes).toFixed(1)} ms each)`,
        ],
      };
    } finally {
      sshd.stop();
    }
  });
}
