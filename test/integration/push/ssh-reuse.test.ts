import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBare, refsOf } from '../../support/git.js';
import { sshdAvailable, startSshd, type Sshd } from '../../support/sshd.js';
import { SshConnectionReuse } from '../../../src/push/ssh-reuse.js';
import { hermeticPusher, makeSource, pick, processes, remoteConfig } from './push-fixtures.js';

/** The master connections of one reuse directory: ssh renames itself "ssh: <socket> [mux]". */
function masters(reuse: SshConnectionReuse): number[] {
  return processes().filter((p) => p.args.includes(reuse.dir) && p.args.includes('[mux]')).map((p) => p.pid);
}

describe.skipIf(!sshdAvailable)('ssh connection reuse (ControlMaster) against sshd on loopback', () => {
  let scratch: string;
  let sshd: Sshd;
  let hung: Sshd;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'refrelay-ssh-reuse-'));
    sshd = await startSshd(join(scratch, 'sshd'));
    hung = await startSshd(join(scratch, 'hung'), { forcedCommand: 'sleep 600' });
  });

  afterAll(async () => {
    await sshd?.stop();
    await hung?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

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
    const outcome = await pusher.push({ remote: remoteConfig({ timeoutMs: 1500 }), uri: hung.url(join(scratch, 'hung', 'x.git')), localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'timeout' } });
    for (let i = 0; i < 50 && masters(reuse).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(masters(reuse)).toEqual([]);
    expect(processes().filter((p) => p.args.includes(hung.clientKey))).toEqual([]);
    await pusher.close();
  });
});
