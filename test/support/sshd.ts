import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, waitForPort } from './free-port.js';
import { stopGroup } from './git-daemon.js';

export const SSHD_BINARY = '/usr/sbin/sshd';

/** True when this machine can run the loopback sshd (openssh-server installed, running as root). */
export const sshdAvailable = existsSync(SSHD_BINARY) && process.getuid?.() === 0;

export interface Sshd {
  readonly port: number;
  readonly user: 'root';
  /** The client's private key: anything with this path in its argv is one of our ssh clients. */
  readonly clientKey: string;
  /** `ssh://root@127.0.0.1:PORT/abs/path`. */
  url(path: string): string;
  /** For GIT_SSH_COMMAND: the client key, no config files, no host-key prompts. */
  readonly sshCommand: string;
  stop(): Promise<void>;
}

export interface SshdOptions {
  /** Put `command="…"` on the client key, e.g. `sleep 600` for a destination that hangs. */
  forcedCommand?: string;
}

/**
 * A real sshd on loopback with fresh host and client ed25519 keys under `dir`.
 * Runs in the foreground (-D) as our child. Session processes call setsid()
 * and escape its process group, so they carry a marker variable (SetEnv) that
 * stop() looks for: a hung forced command cannot outlive the test.
 */
export async function startSshd(dir: string, options: SshdOptions = {}): Promise<Sshd> {
  mkdirSync(dir, { recursive: true });
  mkdirSync('/run/sshd', { recursive: true });
  const hostKey = join(dir, 'host_ed25519');
  const clientKey = join(dir, 'client_ed25519');
  for (const key of [hostKey, clientKey]) {
    if (!existsSync(key)) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'refrelay-test', '-f', key]);
  }
  const publicKey = readFileSync(`${clientKey}.pub`, 'utf8').trim();
  const forced = options.forcedCommand === undefined ? '' : `command="${options.forcedCommand.replace(/["\\]/g, '\\$&')}" `;
  writeFileSync(join(dir, 'authorized_keys'), `${forced}${publicKey}\n`, { mode: 0o600 });
  const marker = `REFRELAY_TEST_SSHD=${dir}`;
  const sshCommand = `ssh -F /dev/null -i ${clientKey} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`;

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const config = join(dir, 'sshd_config');
    writeFileSync(config, sshdConfig({ port, dir, hostKey, marker }));
    const child = spawn(SSHD_BINARY, ['-D', '-e', '-f', config], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr = drain(child);
    try {
      await waitForPort(port, { alive: () => child.exitCode === null && child.signalCode === null });
      return {
        port,
        user: 'root',
        clientKey,
        url: (path) => `ssh://root@127.0.0.1:${port}${path.startsWith('/') ? '' : '/'}${path}`,
        sshCommand,
        stop: async () => {
          await stopGroup(child);
          killMarked(marker);
        },
      };
    } catch (error) {
      await stopGroup(child);
      lastError = new Error(`sshd did not start: ${stderr()}`, { cause: error });
    }
  }
  throw lastError;
}

function sshdConfig(o: { port: number; dir: string; hostKey: string; marker: string }): string {
  return [
    `Port ${o.port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${o.hostKey}`,
    `AuthorizedKeysFile ${join(o.dir, 'authorized_keys')}`,
    `PidFile ${join(o.dir, 'sshd.pid')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
    'UsePAM no',
    'StrictModes no',
    'LogLevel ERROR',
    `SetEnv ${o.marker}`,
    '',
  ].join('\n');
}

function drain(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-4000);
  });
  return () => text;
}

/** SIGKILL every process whose environment carries our session marker. */
function killMarked(marker: string): void {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
    } catch {
      continue; // exited meanwhile, or not ours to read
    }
    if (!environ.split('\0').includes(marker)) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
