import { describe, expect, it } from 'vitest';
import { createTarget, remoteInitCommand, sshCreateArgv } from '../../../src/push/create-repository.js';

describe('createTarget reads where a missing repository can be created', () => {
  it.each([
    ['/srv/git/a.git', { kind: 'local', path: '/srv/git/a.git' }],
    ['../mirror/a.git', { kind: 'local', path: '/srv/src/mirror/a.git' }],
    ['file:///srv/git/a b.git', { kind: 'local', path: '/srv/git/a b.git' }],
    ['file://localhost/srv/a.git', { kind: 'local', path: '/srv/a.git' }],
    ['ssh://git@host.example:2222/srv/a.git', { kind: 'ssh', destination: 'git@host.example', port: '2222', path: '/srv/a.git' }],
    ['ssh://host.example/~/repos/a.git', { kind: 'ssh', destination: 'host.example', path: '~/repos/a.git' }],
    ['git+ssh://[::1]:22/a.git', { kind: 'ssh', destination: '::1', port: '22', path: '/a.git' }],
    ['git@host.example:team/a.git', { kind: 'ssh', destination: 'git@host.example', path: 'team/a.git' }],
  ])('%s', (uri, target) => {
    expect(createTarget(uri, '/srv/src/a.git')).toEqual(target);
  });

  it('percent-decodes file:// and ssh:// paths as git does, so the repository is created where git pushes', () => {
    expect(createTarget('file:///srv/a%20b%25.git', '/x')).toEqual({ kind: 'local', path: '/srv/a b%.git' });
    expect(createTarget('ssh://git@h/srv/%C3%A9t%C3%A9.git', '/x')).toEqual({ kind: 'ssh', destination: 'git@h', path: '/srv/été.git' });
    expect(createTarget('/srv/a%20b.git', '/x')).toEqual({ kind: 'local', path: '/srv/a%20b.git' });
    expect(createTarget('file:///srv/100%.git', '/x')).toEqual({ kind: 'local', path: '/srv/100%.git' });
  });

  it('refuses transports that cannot create repositories, naming git:// as asked', () => {
    expect(createTarget('git://host/a.git', '/')).toEqual({
      kind: 'impossible',
      message: 'destination repository missing and git:// cannot create repositories',
    });
    expect(createTarget('https://host/a.git', '/').kind).toBe('impossible');
    expect(createTarget('file://otherhost/a.git', '/').kind).toBe('impossible');
  });

  it('refuses an ssh host that ssh would read as an option', () => {
    expect(createTarget('ssh://-oProxyCommand=touch%20x/a.git', '/').kind).toBe('impossible');
    expect(createTarget('-oProxyCommand=x:a.git', '/').kind).toBe('impossible');
  });
});

describe('the ssh create command', () => {
  it('quotes the path for the remote shell, keeping ~ expandable', () => {
    expect(remoteInitCommand("/srv/it's here.git")).toBe(`git init --bare -q '/srv/it'\\''s here.git'`);
    expect(remoteInitCommand('~/repos/a.git')).toBe(`git init --bare -q ~/'repos/a.git'`);
    expect(remoteInitCommand('~git/a.git')).toBe(`git init --bare -q ~git/'a.git'`);
  });

  it('runs GIT_SSH_COMMAND through sh like git does, with the port before the host', () => {
    expect(sshCreateArgv('ssh -i /k -o BatchMode=yes', { destination: 'root@127.0.0.1', port: '2222', path: '/x.git' })).toEqual([
      '-c',
      'ssh -i /k -o BatchMode=yes "$@"',
      'ssh',
      '-p',
      '2222',
      'root@127.0.0.1',
      "git init --bare -q '/x.git'",
    ]);
  });
});
