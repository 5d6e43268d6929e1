import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostOf } from './destination-host.js';
import { runProcess } from './run-process.js';
import { errnoName } from '../runtime/errno.js';

/** How long an idle master connection stays up after its last push. */
export const CONTROL_PERSIST_SECONDS = 60;

/**
 * One OpenSSH master connection per destination host (`ControlMaster=auto`, `ControlPersist`),
 * so a burst of pushes to one host pays one handshake instead of one each. The control sockets
 * live in a private directory of this node (mode 0700, made by mkdtemp), named by a hash of the
 * host: short enough for the 104-byte socket path limit, and known to us, so a master can be told
 * to exit when a push to its host is stopped (a hung host) and when the node stops.
 */
export class SshConnectionReuse {
  readonly dir: string;
  private closed = false;

  constructor(parent = tmpdir()) {
    sweepDeadNodes(parent);
    this.dir = mkdtempSync(join(parent, `rr-ssh-${process.pid}-`));
  }

  /** The control socket for a URL's host, or undefined when the URL does not go over ssh. */
  controlPath(uri: string): string | undefined {
    if (this.closed) return undefined;
    const host = hostOf(uri);
    if (!host.startsWith('ssh://')) return undefined;
    return join(this.dir, createHash('sha1').update(host).digest('hex').slice(0, 16));
  }

  /** ssh options that make `sshCommand` share the host's master connection. */
  sshCommand(sshCommand: string, controlPath: string): string {
    return `${sshCommand} -o ControlMaster=auto -o ControlPersist=${CONTROL_PERSIST_SECONDS} -o ControlPath=${controlPath}`;
  }

  /**
   * Ends a master connection: after a push to its host was stopped (the host may hang every
   * session on it), and at node stop. The master is its own session (ssh detaches it), so the
   * push's process-group kill does not reach it; `ssh -O exit` does.
   */
  async exit(controlPath: string, env: Readonly<Record<string, string>>): Promise<void> {
    await runProcess('ssh', ['-o', `ControlPath=${controlPath}`, '-O', 'exit', 'refrelay-control'], {
      env,
      killGraceMs: 500,
      signal: AbortSignal.timeout(5000),
    }).catch(() => undefined);
  }

  /** Every master this node started exits; the directory goes away. */
  async close(env: Readonly<Record<string, string>>): Promise<void> {
    this.closed = true;
    let sockets: string[];
    try {
      sockets = readdirSync(this.dir);
    } catch {
      return;
    }
    await Promise.all(sockets.map((name) => this.exit(join(this.dir, name), env)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Directories of nodes that died without closing (kill -9): their masters exit on their own after
 * ControlPersist and remove their sockets; the empty directories are removed here.
 */
function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoName(error) === 'EPERM';
  }
}

function sweepDeadNodes(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^rr-ssh-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || isPidAlive(pid)) continue;
    try {
      if (readdirSync(join(parent, name)).length === 0) rmSync(join(parent, name), { recursive: true, force: true });
    } catch {
      // not ours to worry about
    }
  }
}
