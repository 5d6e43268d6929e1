import { describe, expect, it } from 'vitest';
import { ASKPASS_PROGRAM, allowedProtocol, destinationEnv, sshCommandFor } from '../../../src/push/destination-env.js';
import { existsSync, statSync } from 'node:fs';

const remote = { sshStrictHostKeyChecking: 'yes' as const };

describe('destination environment', () => {
  it.each([
    ['ssh://git@host/x.git', 'ssh'],
    ['git@host:x.git', 'ssh'],
    ['git+ssh://host/x.git', 'ssh'],
    ['https://host/x.git', 'https'],
    ['http://host/x.git', 'http'],
    ['git://host/x.git', 'git'],
    ['file:///srv/x.git', 'file'],
    ['/srv/x.git', 'file'],
    ['ext::sh -c evil', 'none'],
    ['fd::3', 'none'],
  ])('%s may use only the %s protocol', (uri, protocol) => {
    expect(allowedProtocol(uri)).toBe(protocol);
    expect(destinationEnv(uri, remote, { operatorSshCommand: undefined, usesGitSsh: false, credentials: undefined }).GIT_ALLOW_PROTOCOL).toBe(protocol);
  });

  it("builds the ssh command from the remote's own command, then refrelay's options, the host-key policy and the quoted key", () => {
    expect(
      sshCommandFor({ sshCommand: 'ssh -F /etc/refrelay/ssh_config', sshIdentity: "/keys/it's.key", sshStrictHostKeyChecking: 'accept-new' }, 'ssh -v'),
    ).toBe(
      "ssh -F /etc/refrelay/ssh_config -o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o StrictHostKeyChecking=accept-new -i '/keys/it'\\''s.key' -o IdentitiesOnly=yes",
    );
    expect(sshCommandFor(remote, 'ssh -i /operator/key')).toBe(
      'ssh -i /operator/key -o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o StrictHostKeyChecking=yes',
    );
    expect(sshCommandFor(remote, undefined)).toMatch(/^ssh -o BatchMode=yes /);
  });

  it('gives the askpass program and the secret only to http(s) pushes of a remote with credentials, and switches credential helpers off', () => {
    const credentials = { username: 'bot', password: 'hunter2' };
    expect(destinationEnv('https://host/x.git', remote, { operatorSshCommand: undefined, usesGitSsh: false, credentials })).toEqual({
      GIT_ALLOW_PROTOCOL: 'https',
      GIT_ASKPASS: ASKPASS_PROGRAM,
      REFRELAY_ASKPASS_USERNAME: 'bot',
      REFRELAY_ASKPASS_PASSWORD: 'hunter2',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: '',
    });
    const ssh = destinationEnv('ssh://host/x.git', remote, { operatorSshCommand: undefined, usesGitSsh: false, credentials });
    expect(Object.values(ssh).join(' ')).not.toContain('hunter2');
    expect(destinationEnv('https://host/x.git', remote, { operatorSshCommand: undefined, usesGitSsh: false, credentials: undefined })).toEqual({
      GIT_ALLOW_PROTOCOL: 'https',
    });
  });

  it('leaves GIT_SSH alone when the operator chose a program instead of a command', () => {
    expect(destinationEnv('ssh://host/x.git', remote, { operatorSshCommand: undefined, usesGitSsh: true, credentials: undefined })).toEqual({
      GIT_ALLOW_PROTOCOL: 'ssh',
    });
  });

  it('ships an executable askpass program', () => {
    expect(existsSync(ASKPASS_PROGRAM)).toBe(true);
    expect(statSync(ASKPASS_PROGRAM).mode & 0o111).not.toBe(0);
  });
});
