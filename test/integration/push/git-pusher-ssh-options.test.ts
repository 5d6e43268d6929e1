import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBare, refsOf } from '../../support/git.js';
import { sshdAvailable, startSshd, type Sshd } from '../../support/sshd.js';
import { hermeticPusher, makeSource, remoteConfig, type Source } from './push-fixtures.js';

describe.skipIf(!sshdAvailable)('remote.NAME.sshIdentity, sshCommand and sshStrictHostKeyChecking (sshd on loopback)', () => {
  let scratch: string;
  let sshd: Sshd;
  let source: Source;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'refrelay-sshopt-'));
    sshd = await startSshd(join(scratch, 'sshd'));
    source = makeSource(join(scratch, 'src'));
  });

  afterAll(async () => {
    await sshd?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('an unknown host key is refused by default; accept-new records it and pushes; afterwards the default policy pushes too', async () => {
    const knownHosts = join(scratch, 'known_hosts');
    // No operator GIT_SSH_COMMAND: the remote's own command and key are all ssh gets.
    const base = { sshIdentity: sshd.clientKey, sshCommand: `ssh -F /dev/null -o UserKnownHostsFile=${knownHosts} -o LogLevel=ERROR` };
    const pusher = hermeticPusher();
    const refused = initBare(join(scratch, 'refused.git'));
    const first = await pusher.push({ remote: remoteConfig(base), uri: sshd.url(refused), localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(first).toMatchObject({ result: 'failed' });
    expect(first.failure?.stderrTail).toMatch(/Host key verification failed/);
    expect(refsOf(refused).size).toBe(0);
    expect(existsSync(knownHosts) ? readFileSync(knownHosts, 'utf8') : '').toBe('');

    const accepted = initBare(join(scratch, 'accepted.git'));
    const second = await pusher.push({
      remote: remoteConfig({ ...base, sshStrictHostKeyChecking: 'accept-new' }),
      uri: sshd.url(accepted),
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(second).toMatchObject({ result: 'ok' });
    expect(refsOf(accepted).get('refs/heads/main')).toBe(source.refs().get('refs/heads/main'));
    expect(readFileSync(knownHosts, 'utf8')).toContain(`[127.0.0.1]:${sshd.port} ssh-ed25519 `);

    const third = await pusher.push({ remote: remoteConfig(base), uri: sshd.url(refused), localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(third).toMatchObject({ result: 'ok' });
  });

  it("without the remote's key the server refuses: the key comes from sshIdentity, not from ssh defaults", async () => {
    const dest = initBare(join(scratch, 'nokey.git'));
    const remote = remoteConfig({
      sshCommand: `ssh -F /dev/null -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o IdentityFile=/nonexistent -o LogLevel=ERROR`,
    });
    const outcome = await hermeticPusher().push({ remote, uri: sshd.url(dest), localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'auth' } });
  });
});
