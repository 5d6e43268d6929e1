// Loopback infrastructure of a chaos run: a real sshd, sshfs mounts of the store through it, a
// `git daemon`, and the bookkeeping that lets cleanup end every process the run started (sshd
// sessions and orphaned `git push` groups included) and unmount what it mounted.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

export const SSHD = '/usr/sbin/sshd';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Why this machine cannot run the chaos test, or undefined when it can. */
export function missingPrerequisites() {
  const missing = [];
  if (process.getuid?.() !== 0) missing.push('must run as root (sshd on loopback, FUSE mounts)');
  if (!existsSync('/dev/fuse')) missing.push('no /dev/fuse');
  if (!existsSync(SSHD)) missing.push(`no ${SSHD} (apt-get install openssh-server)`);
  for (const tool of ['sshfs', 'fusermount3', 'ssh', 'ssh-keygen', 'git']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) missing.push(`no ${tool} on PATH`);
  }
  try {
    if (!readFileSync('/proc/filesystems', 'utf8').includes('fuse')) missing.push('the kernel has no fuse filesystem');
  } catch {
    // not Linux: the tool checks above already say what is missing
  }
  return missing.length === 0 ? undefined : missing.join('; ');
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function waitForPort(port, child, what) {
  const deadline = Date.now() + 10_000;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited before listening on ${port}`);
    if (Date.now() > deadline) throw new Error(`${what} is not listening on ${port} after 10 s`);
    await sleep(25);
  }
}

/**
 * Everything a run starts is registered here, and every child carries the run's marker in its
 * environment; `cleanup()` kills by both, so nothing outlives the run, whatever failed.
 */
export class Processes {
  constructor(root) {
    this.root = root;
    this.marker = `REFRELAY_CHAOS_RUN=${root}`;
    this.children = new Set();
    this.mounts = [];
  }

  get env() {
    return { REFRELAY_CHAOS_RUN: this.root };
  }

  /** `detached`: the child leads its own process group, so its descendants die with it. */
  spawn(command, args, options = {}) {
    const child = spawn(command, args, { ...options, detached: true, env: { ...process.env, ...options.env, ...this.env } });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  async cleanup() {
    for (const child of this.children) signalGroup(child.pid, 'SIGCONT');
    for (const child of this.children) signalGroup(child.pid, 'SIGKILL');
    killWhere((pid) => this.belongsToRun(pid));
    for (const mount of this.mounts.splice(0).reverse()) unmount(mount);
    // Processes that were blocked on a mount we just lazily detached may only die now.
    await sleep(200);
    killWhere((pid) => this.belongsToRun(pid));
  }

  /** Our marker in its environment, or its working directory inside the workspace (git push orphans run with a scrubbed environment). */
  belongsToRun(pid) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(this.marker)) return true;
    } catch {
      // exited meanwhile
    }
    try {
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      return cwd === this.root || cwd.startsWith(`${this.root}/`);
    } catch {
      return false;
    }
  }
}

function signalGroup(pid, signal) {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

function killWhere(predicate) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    if (!predicate(Number(entry))) continue;
    try {
      process.kill(Number(entry), 'SIGCONT');
      process.kill(Number(entry), 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** A real sshd on 127.0.0.1 with fresh keys, serving sftp for the mounts. */
export async function startSshd(processes, dir) {
  mkdirSync(dir, { recursive: true });
  mkdirSync('/run/sshd', { recursive: true });
  const hostKey = join(dir, 'host_ed25519');
  const clientKey = join(dir, 'client_ed25519');
  for (const key of [hostKey, clientKey]) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'refrelay-chaos', '-f', key]);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`, 'utf8'), { mode: 0o600 });
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const config = join(dir, 'sshd_config');
    writeFileSync(
      config,
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
        // Sessions call setsid(): the marker lets cleanup find them anyway.
        `SetEnv ${processes.marker}`,
        'Subsystem sftp internal-sftp',
        '',
      ].join('\n'),
    );
    const child = processes.spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'ignore'] });
    try {
      await waitForPort(port, child, 'sshd');
      const sshCommand = `ssh -F /dev/null -i ${clientKey} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ServerAliveInterval=5 -p ${port}`;
      return { port, sshCommand };
    } catch (error) {
      signalGroup(child.pid, 'SIGKILL');
      lastError = error;
    }
  }
  throw lastError;
}

function isMounted(path) {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === path);
}

/** sshfs in the foreground (our child), mounting `remoteDir` of the loopback sshd at `mountpoint`. */
export async function mountSshfs(processes, sshd, remoteDir, mountpoint, options) {
  mkdirSync(mountpoint, { recursive: true });
  const child = processes.spawn('sshfs', [`root@127.0.0.1:${remoteDir}`, mountpoint, '-f', '-o', `ssh_command=${sshd.sshCommand}`, '-o', options], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  processes.mounts.push(mountpoint);
  const deadline = Date.now() + 15_000;
  while (!isMounted(mountpoint)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`sshfs ${mountpoint} did not mount: ${stderr.trim()}`);
    await sleep(50);
  }
  // The mount answers only once the sftp session is up.
  readdirSync(mountpoint);
  return child;
}

function mountType(path) {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .find((fields) => fields[1] === path)?.[2];
}

/** FUSE mounts through fusermount3, anything else (the store's tmpfs) through umount; lazily when busy. */
export function unmount(mountpoint) {
  const type = mountType(mountpoint);
  if (type === undefined) return;
  const [tool, lazy] = type.startsWith('fuse') ? ['fusermount3', ['-u', '-z']] : ['umount', ['-l']];
  if (spawnSync(tool, type.startsWith('fuse') ? ['-u', mountpoint] : [mountpoint]).status === 0) return;
  spawnSync(tool, [...lazy, mountpoint]);
}

/** `git daemon` serving pushes to every repository under `base`. */
export async function startGitDaemon(processes, base, env) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = processes.spawn(
      'git',
      ['daemon', '--reuseaddr', '--enable=receive-pack', '--export-all', `--base-path=${base}`, '--listen=127.0.0.1', `--port=${port}`, base],
      { stdio: ['ignore', 'ignore', 'ignore'], env },
    );
    try {
      await waitForPort(port, child, 'git daemon');
      return { port, url: (name) => `git://127.0.0.1:${port}/${name}` };
    } catch (error) {
      signalGroup(child.pid, 'SIGKILL');
      lastError = error;
    }
  }
  throw lastError;
}
