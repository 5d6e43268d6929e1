import { describe, expect, it } from 'vitest';
import { dirname, join } from 'node:path';
import { GERRIT_GERRIT_ONLY, REMOTE_GERRIT_ONLY, REPLICATION_GERRIT_ONLY } from '../../../src/config/config-keys.js';
import { validateConfig } from '../../../src/config/load-config.js';
import { MISSING_STORE_PATH } from '../../../src/config/store-path.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { entries } from './config-entries.js';

const FILE = '/etc/refrelay/replication.config';
const BASE = ['replication.storePath=/store', 'remote.m.url=/m/${name}.git'];

function validate(...lines: string[]) {
  return validateConfig(entries(...lines), FILE, 'node-a');
}

function valid(...lines: string[]): ReplicationConfig {
  const result = validate(...lines);
  expect(result.problems).toEqual([]);
  if (!result.config) throw new Error('no config');
  return result.config;
}

function messages(...lines: string[]): string[] {
  return validate(...lines).problems.map((p) => `${p.key}: ${p.message}`);
}

describe('validateConfig defaults', () => {
  it('fills every default of the node and of a remote', () => {
    const config = valid(...BASE);
    expect(config).toMatchObject({
      file: FILE,
      storePath: '/store',
      basePath: undefined,
      nodeId: 'node-a',
      distributionIntervalMs: 10_000,
      randomDelayMs: 1000,
      lockStaleMs: 60_000,
      maxRetries: 0,
      httpListen: '127.0.0.1:9464',
      shutdownGraceMs: 30_000,
      warnings: [],
    });
    const [remote] = config.remotes;
    expect(remote).toMatchObject({
      name: 'm',
      urls: ['/m/${name}.git'],
      projects: [],
      excludeProjects: [],
      threads: 1,
      replicationDelayMs: 15_000,
      rescheduleDelayMs: 3000,
      replicationRetryMs: 60_000,
      replicationMaxRetries: 0,
      timeoutMs: 0,
      pushDeadlineMs: 0,
      mirror: false,
      createMissingRepositories: true,
      excludedRefsPatterns: [],
      remoteNameStyle: 'slash',
      replicatePermissions: true,
      replicateNoteDbMetaRefs: true,
    });
    expect(remote?.push).toEqual([{ force: false, src: 'refs/*', dst: 'refs/*', text: 'refs/*:refs/*' }]);
  });

  it('lets replicationMaxRetries default to replication.maxRetries', () => {
    const config = valid(...BASE, 'replication.maxRetries=5', 'remote.n.url=/n/${name}', 'remote.n.replicationMaxRetries=0');
    expect(config.remotes.map((r) => r.replicationMaxRetries)).toEqual([5, 0]);
  });

  it('makes the default refspec forced under gerrit.defaultForceUpdate, without a warning', () => {
    const config = valid(...BASE, 'gerrit.defaultForceUpdate=true', 'remote.n.url=/n/${name}', 'remote.n.push=refs/heads/*:refs/heads/*');
    expect(config.remotes[0]?.push.map((s) => s.text)).toEqual(['+refs/*:refs/*']);
    expect(config.remotes[1]?.push.map((s) => s.text)).toEqual(['refs/heads/*:refs/heads/*']);
    expect(config.warnings).toEqual([]);
  });

  it('reads a bare replicationRetry in minutes and other bare delays in seconds', () => {
    const [remote] = valid(...BASE, 'remote.m.replicationRetry=2', 'remote.m.replicationDelay=4', 'remote.m.timeout=30').remotes;
    expect(remote).toMatchObject({ replicationRetryMs: 120_000, replicationDelayMs: 4000, timeoutMs: 30_000 });
  });

  it('reads pushDeadline as a duration, a bare number in seconds like timeout', () => {
    expect(valid(...BASE, 'remote.m.pushDeadline=90').remotes[0]).toMatchObject({ pushDeadlineMs: 90_000, timeoutMs: 0 });
    expect(valid(...BASE, 'remote.m.pushDeadline=2h', 'remote.m.timeout=30s').remotes[0]).toMatchObject({ pushDeadlineMs: 7_200_000, timeoutMs: 30_000 });
    expect(messages(...BASE, 'remote.m.pushDeadline=never')).toEqual(['remote.m.pushDeadline: expected a duration such as 15s, 2m, 500ms, got "never"']);
  });

  it('raises a rescheduleDelay below 3s to 3s, as Gerrit does', () => {
    expect(valid(...BASE, 'remote.m.rescheduleDelay=1').remotes[0]?.rescheduleDelayMs).toBe(3000);
    expect(valid(...BASE, 'remote.m.rescheduleDelay=5s').remotes[0]?.rescheduleDelayMs).toBe(5000);
  });

  it('lets the last value of a single-valued key win, as git does', () => {
    const config = valid(...BASE, 'remote.m.threads=2', 'remote.m.threads=6', 'replication.randomDelay=5s', 'replication.randomDelay=0');
    expect(config.remotes[0]?.threads).toBe(6);
    expect(config.randomDelayMs).toBe(0);
  });
});

describe('validateConfig paths and node settings', () => {
  it('resolves relative storePath and basePath against the config file directory', () => {
    const config = valid('replication.storePath=store', 'replication.basePath=../git', 'remote.m.url=/m/${name}');
    expect(config.storePath).toBe('/etc/refrelay/store');
    expect(config.basePath).toBe('/etc/git');
  });

  it('accepts Gerrit eventsDirectory as storePath, and storePath wins when both are set', () => {
    expect(valid('replication.eventsDirectory=/events', 'remote.m.url=/m/${name}').storePath).toBe('/events');
    expect(valid('replication.storePath=/s', 'replication.eventsDirectory=/e', 'remote.m.url=/m/${name}').storePath).toBe('/s');
  });

  it('reports a missing storePath, saying what to add', () => {
    expect(messages('remote.m.url=/m/${name}')).toEqual([`replication.storePath: ${MISSING_STORE_PATH}`]);
  });

  it('uses nodeId over the hostname, and rejects a hostname unfit for file names', () => {
    expect(valid(...BASE, 'replication.nodeId=master-2').nodeId).toBe('master-2');
    const result = validateConfig(entries(...BASE), FILE, 'bad host');
    expect(result.problems.map((p) => p.key)).toEqual(['replication.nodeId']);
    expect(validateConfig(entries(...BASE, 'replication.nodeId=n1'), FILE, 'bad host').problems).toEqual([]);
  });

  it.each(['off', 'OFF', '0.0.0.0:0', '[::1]:9464', 'localhost:65535'])('accepts httpListen %s', (text) => {
    expect(valid(...BASE, `replication.httpListen=${text}`).httpListen).toBe(text.toLowerCase() === 'off' ? 'off' : text);
  });

  it.each(['localhost', 'localhost:65536', ':9464', 'host:port', 'a b:1'])('rejects httpListen %s', (text) => {
    expect(messages(...BASE, `replication.httpListen=${text}`)).toEqual([`replication.httpListen: expected host:port (port 0-65535) or off, got "${text}"`]);
  });

  it('reads shutdownGrace as a duration', () => {
    expect(valid(...BASE, 'replication.shutdownGrace=2m').shutdownGraceMs).toBe(120_000);
    expect(messages(...BASE, 'replication.shutdownGrace=later')).toEqual([
      'replication.shutdownGrace: expected a duration such as 15s, 2m, 500ms, got "later"',
    ]);
  });

  it('rejects a zero lockStale, which would steal live locks', () => {
    expect(messages(...BASE, 'replication.lockStale=0s')).toEqual(['replication.lockStale: expected a duration greater than 0, got "0s"']);
  });

  it('refuses a lockStale under 1s, where a holder that cannot write its heartbeat would still push when a peer takes over', () => {
    const expected = (text: string) =>
      'replication.lockStale: expected at least 1s (a holder that cannot write its lock heartbeat stops its push up to one heartbeat, ' +
      `250ms at the least, after lockStale/2; under 1s that comes too close to lockStale, when a peer takes the lock over), got "${text}"`;
    expect(messages(...BASE, 'replication.lockStale=1ms')).toEqual([expected('1ms')]);
    expect(messages(...BASE, 'replication.lockStale=999ms')).toEqual([expected('999ms')]);
    expect(valid(...BASE, 'replication.lockStale=1s').lockStaleMs).toBe(1000);
    expect(valid(...BASE, 'replication.lockStale=1000ms').lockStaleMs).toBe(1000);
  });
});

describe('validateConfig booleans', () => {
  it.each(['true', 'yes', 'on', '1', 'TRUE', 'Yes'])('reads %s as true', (text) => {
    expect(valid(...BASE, `remote.m.mirror=${text}`).remotes[0]?.mirror).toBe(true);
  });

  it.each(['false', 'no', 'off', '0', ''])('reads %j as false', (text) => {
    expect(valid(...BASE, `remote.m.createMissingRepositories=${text}`).remotes[0]?.createMissingRepositories).toBe(false);
  });

  it('reads a bare key as true', () => {
    expect(valid(...BASE, 'remote.m.mirror').remotes[0]?.mirror).toBe(true);
  });

  it('rejects anything else', () => {
    expect(messages(...BASE, 'remote.m.mirror=maybe')).toEqual(['remote.m.mirror: expected true or false (also yes/no, on/off, 1/0), got "maybe"']);
  });
});

describe('validateConfig urls', () => {
  it('allows a url without ${name} when the remote names exactly one exact project', () => {
    expect(valid('replication.storePath=/s', 'remote.a.url=/one.git', 'remote.a.projects=All-Users').remotes[0]?.urls).toEqual(['/one.git']);
  });

  it.each([[[]], [['remote.a.projects=a', 'remote.a.projects=b']], [['remote.a.projects=team/*']], [['remote.a.projects=^a']]])(
    'rejects a url without ${name} otherwise (%j)',
    (projects) => {
      expect(messages('replication.storePath=/s', 'remote.a.url=/one.git', ...projects)).toEqual([
        'remote.a.url: url has no ${name} and the remote does not name exactly one project',
      ]);
    },
  );

  it('keeps every url and push refspec in file order, merging repeated sections', () => {
    const config = valid(
      'replication.storePath=/s',
      'remote.a.url=/1/${name}',
      'remote.a.push=refs/heads/*:refs/heads/*',
      'remote.b.url=/b/${name}',
      'remote.a.url=/2/${name}',
      'remote.a.push=+refs/tags/*:refs/tags/*',
    );
    expect(config.remotes.map((r) => r.name)).toEqual(['a', 'b']);
    expect(config.remotes[0]?.urls).toEqual(['/1/${name}', '/2/${name}']);
    expect(config.remotes[0]?.push.map((s) => s.text)).toEqual(['refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*']);
  });
});

describe('validateConfig problems', () => {
  it('reports every problem at once, keyed by the full key with the remote name as written', () => {
    expect(
      messages(
        'replication.storePath=/s',
        'remote.eu.Mirror.url=/m/${name}',
        'remote.eu.Mirror.threads=many',
        'remote.eu.Mirror.replicationDelay=soon',
        'remote.eu.Mirror.excludedRefsPattern=refs/(x',
        'remote.eu.Mirror.shares=0',
      ),
    ).toEqual([
      'remote.eu.Mirror.threads: expected a whole number ≥ 1, got "many"',
      'remote.eu.Mirror.replicationDelay: expected a duration such as 15s, 2m, 500ms, got "soon"',
      'remote.eu.Mirror.shares: expected a whole number from 1 to 1000, got "0"',
    ]);
  });

  it('ignores an invalid excludedRefsPattern with a warning, as Gerrit does, and keeps the valid ones', () => {
    const result = validate(...BASE, 'remote.m.excludedRefsPattern=refs/(x', 'remote.m.excludedRefsPattern=refs/heads/wip/.*');
    expect(result.problems).toEqual([]);
    expect(result.warnings.map((w) => `${w.key}: ${w.message}`)).toEqual([
      'remote.m.excludedRefsPattern: invalid regular expression "refs/(x": Unclosed group near index 7; ignored, as Gerrit ignores it: the refs it was written to keep back are replicated until the expression is fixed',
    ]);
    expect(result.config?.remotes[0]?.excludedRefsPatterns.map((p) => p.text)).toEqual(['refs/heads/wip/.*']);
  });

  it('loads patterns written as a prefix, which match nothing, with one warning each naming the key and the fix', () => {
    const result = validate(
      ...BASE,
      'remote.m.excludedRefsPattern=^refs/heads/wip/',
      'remote.m.excludedRefsPattern=refs/meta/config',
      'remote.m.projects=^team/',
      'remote.m.projects=^team/app',
      'remote.m.excludeProjects=team/attic/',
    );
    expect(result.problems).toEqual([]);
    expect(result.warnings.map((w) => `${w.key}: ${w.message}`)).toEqual([
      'remote.m.projects: "^team/" matches no project: a ^regex must match the whole project name, as in Gerrit, and no project name ends in "/"; ' +
        'to select the projects under it, append .*: "^team/.*"',
      'remote.m.excludeProjects: "team/attic/" matches no project: a name without * or ^ is one exact project name, and none ends in "/"; ' +
        'to exclude the projects under it, append *: "team/attic/*"',
      'remote.m.excludedRefsPattern: "^refs/heads/wip/" matches no ref: the pattern must match the whole ref name, as in Gerrit, and no ref name ends in "/"; ' +
        'to exclude the refs under it, append .*: "^refs/heads/wip/.*"',
    ]);
    expect(result.config?.remotes[0]?.excludedRefsPatterns.map((p) => p.text)).toEqual(['^refs/heads/wip/', 'refs/meta/config']);
  });

  it('reports unknown keys in every known section with a did-you-mean', () => {
    expect(messages(...BASE, 'replication.storPath=/x', 'remote.m.thread=2', 'gerrit.defaultForceUpdates=true', 'remote.m.colour=red')).toEqual([
      'replication.storpath: unknown key (did you mean "storePath"?)',
      'remote.m.thread: unknown key (did you mean "threads"?)',
      'gerrit.defaultforceupdates: unknown key (did you mean "defaultForceUpdate"?)',
      'remote.m.colour: unknown key',
    ]);
  });

  it('reports an unknown key once even when it is repeated', () => {
    expect(messages(...BASE, 'remote.m.colour=red', 'remote.m.colour=blue')).toEqual(['remote.m.colour: unknown key']);
  });

  it('rejects a name on [replication] and a [remote] without one', () => {
    expect(messages(...BASE, 'replication.x.storePath=/y', 'remote.url=/z')).toEqual([
      'replication.x: [replication] takes no name; write [replication]',
      'remote.url: a remote needs a name, as in [remote "backup"]',
    ]);
  });

  it('compiles excludedRefsPattern to match whole ref names', () => {
    const [pattern] = valid(...BASE, 'remote.m.excludedRefsPattern=refs/changes/.*').remotes[0]?.excludedRefsPatterns ?? [];
    expect(pattern?.matches('refs/changes/01/1/1')).toBe(true);
    expect(pattern?.matches('refs/heads/refs/changes/x')).toBe(false);
  });

  it('honours replicatePermissions and replicateNoteDbMetaRefs as Gerrit spells them, without a warning, and refuses a non-boolean', () => {
    const config = valid(...BASE, 'remote.m.replicatePermissions=false', 'remote.m.replicateNoteDbMetaRefs=no');
    expect(config.remotes[0]).toMatchObject({ replicatePermissions: false, replicateNoteDbMetaRefs: false });
    expect(config.warnings).toEqual([]);
    expect(messages(...BASE, 'remote.m.replicatePermissions=never')).toEqual([
      'remote.m.replicatePermissions: expected true or false (also yes/no, on/off, 1/0), got "never"',
    ]);
  });

  it('uses the file path as given in every problem', () => {
    const result = validateConfig(entries('remote.m.url=/m/${name}'), 'conf/replication.config', 'h');
    expect(result.problems).toEqual([{ file: 'conf/replication.config', key: 'replication.storePath', message: MISSING_STORE_PATH }]);
  });
});

describe('validateConfig warnings', () => {
  const cases: [string, string, string][] = [
    ...Object.entries(REMOTE_GERRIT_ONLY).map(([k, why]): [string, string, string] => [`remote.m.${k}`, `remote.m.${k}`, why]),
    ...Object.entries(REPLICATION_GERRIT_ONLY).map(([k, why]): [string, string, string] => [`replication.${k}`, `replication.${k}`, why]),
    ...Object.entries(GERRIT_GERRIT_ONLY).map(([k, why]): [string, string, string] => [`gerrit.${k}`, `gerrit.${k}`, why]),
  ];

  it.each(cases)('accepts Gerrit-only %s with one warning naming it', (line, key, why) => {
    const result = validate(...BASE, `${line}=x`, `${line}=y`);
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([{ file: FILE, key, message: why }]);
    expect(result.config?.warnings).toEqual(result.warnings);
  });

  it('explains why each Gerrit-only key is not honoured', () => {
    expect(REMOTE_GERRIT_ONLY.authGroup).toBe('Gerrit access groups do not exist outside Gerrit; all refs matched by push are replicated');
    expect(REMOTE_GERRIT_ONLY.replicateHiddenProjects).toBe(
      'refrelay cannot see which projects Gerrit hides: hidden projects ARE replicated unless projects/excludeProjects leave them out',
    );
    expect(REMOTE_GERRIT_ONLY.replicateProjectDeletions).toBe(
      'project deletions are not replicated: refrelay never deletes a destination repository; delete it by hand',
    );
    expect(REMOTE_GERRIT_ONLY.password).toContain('secure.config');
    expect(REMOTE_GERRIT_ONLY.username).toContain('secure.config');
  });

  it("reads the credential, umask and ssh settings, relative paths from the config file's folder", () => {
    const config = valid(
      ...BASE,
      'replication.secureConfig=etc/secure.config',
      'replication.allowInsecureSecrets=true',
      'replication.storeUmask=0077',
      'remote.m.sshIdentity=keys/id_ed25519',
      'remote.m.sshCommand=ssh -F /etc/refrelay/ssh_config',
      'remote.m.sshStrictHostKeyChecking=accept-new',
      'gerrit.autoReload=true',
      'gerrit.replicateOnStartup=false',
    );
    expect(config.warnings).toEqual([]);
    expect(config).toMatchObject({
      secureConfig: join(dirname(config.file), 'etc/secure.config'),
      allowInsecureSecrets: true,
      storeUmask: 0o077,
      autoReload: true,
      replicateOnStartup: false,
    });
    expect(config.remotes[0]).toMatchObject({
      sshIdentity: join(dirname(config.file), 'keys/id_ed25519'),
      sshCommand: 'ssh -F /etc/refrelay/ssh_config',
      sshStrictHostKeyChecking: 'accept-new',
    });
  });

  it('defaults: no secure.config unless one sits beside the config, umask 027, host keys must be known', () => {
    const config = valid(...BASE);
    expect(config.secureConfig).toBeUndefined();
    expect(config).toMatchObject({ allowInsecureSecrets: false, storeUmask: 0o027 });
    expect(config.remotes[0]).toMatchObject({ sshStrictHostKeyChecking: 'yes' });
    expect(config.remotes[0]?.sshIdentity).toBeUndefined();
  });

  it('refuses a non-octal umask, a blank ssh command and a host-key policy that accepts anything', () => {
    const result = validate(...BASE, 'replication.storeUmask=rw-r-----', 'remote.m.sshCommand=-o Foo=bar', 'remote.m.sshStrictHostKeyChecking=no');
    expect(result.problems.map((p) => `${p.key}: ${p.message}`)).toEqual([
      'replication.storeUmask: expected an octal umask such as 027, got "rw-r-----"',
      'remote.m.sshCommand: expected an ssh program first, got "-o Foo=bar"',
      'remote.m.sshStrictHostKeyChecking: expected yes or accept-new (host keys are never accepted blindly), got "no"',
    ]);
  });

  it('refuses a umask that takes any permission from the owner, which would leave init a half-made store it cannot enter', () => {
    const expected = (text: string) =>
      'replication.storeUmask: expected a umask whose owner digit is 0, such as 027 or 077 (refrelay must read, write and enter ' +
      `everything it creates in the store, or init and the daemon fail halfway), got "${text}"`;
    expect(messages(...BASE, 'replication.storeUmask=0277')).toEqual([expected('0277')]);
    expect(messages(...BASE, 'replication.storeUmask=777')).toEqual([expected('777')]);
    expect(messages(...BASE, 'replication.storeUmask=100')).toEqual([expected('100')]);
    expect(valid(...BASE, 'replication.storeUmask=0077').storeUmask).toBe(0o077);
  });

  it('limits ref names to 4096 bytes unless maxRefNameBytes says otherwise, and refuses a limit below 1', () => {
    expect(valid(...BASE).maxRefNameBytes).toBe(4096);
    expect(valid(...BASE, 'replication.maxRefNameBytes=255').maxRefNameBytes).toBe(255);
    const result = validate(...BASE, 'replication.maxRefNameBytes=0');
    expect(result.problems.map((p) => p.key)).toEqual(['replication.maxRefNameBytes']);
  });

  it('parks a ref refused 3 times in a row unless refRejectionLimit says otherwise, and refuses a limit below 1', () => {
    expect(valid(...BASE).refRejectionLimit).toBe(3);
    expect(valid(...BASE, 'replication.refRejectionLimit=10').refRejectionLimit).toBe(10);
    const result = validate(...BASE, 'replication.refRejectionLimit=0');
    expect(result.problems.map((p) => p.key)).toEqual(['replication.refRejectionLimit']);
  });

  it('leaves spoolPath to the user default unless set (relative to the config file), and spools a store write after 5s unless spoolAfter says otherwise', () => {
    const defaults = valid(...BASE);
    expect(defaults.spoolPath).toBeUndefined();
    expect(defaults.spoolAfterMs).toBe(5000);
    const set = valid(...BASE, 'replication.spoolPath=spool', 'replication.spoolAfter=2s');
    expect(set.spoolPath).toBe(join(dirname(set.file), 'spool'));
    expect(set.spoolAfterMs).toBe(2000);
    expect(validate(...BASE, 'replication.spoolAfter=0').problems.map((p) => p.key)).toEqual(['replication.spoolAfter']);
  });

  it('keeps dropped failed tasks 7 days unless retention says otherwise (0: until the next sweep), and refuses what is no duration', () => {
    expect(valid(...BASE).retentionMs).toBe(7 * 24 * 3_600_000);
    expect(valid(...BASE, 'replication.retention=2d').retentionMs).toBe(2 * 24 * 3_600_000);
    expect(valid(...BASE, 'replication.retention=0').retentionMs).toBe(0);
    expect(validate(...BASE, 'replication.retention=a week').problems.map((p) => p.key)).toEqual(['replication.retention']);
  });

  it('warns once per unknown section and ignores its keys', () => {
    const result = validate(...BASE, 'core.bare=true', 'core.editor=vi', 'plugin.x.a=1', 'include.path=other.config');
    expect(result.problems).toEqual([]);
    expect(result.warnings.map((w) => `${w.key}: ${w.message}`)).toEqual([
      'core: section ignored: refrelay reads only [replication], [remote "NAME"] and [gerrit]',
      'plugin.x: section ignored: refrelay reads only [replication], [remote "NAME"] and [gerrit]',
      'include: section ignored: refrelay does not follow config includes',
    ]);
  });
});

describe('validateConfig result', () => {
  it('returns no config when there is a problem', () => {
    expect(validate('remote.m.url=/m/${name}').config).toBeUndefined();
  });

  it('deep-freezes the config, down to refspecs, patterns and regexes', () => {
    const config = valid(...BASE, 'remote.m.projects=^a.*', 'remote.m.excludedRefsPattern=refs/x/.*');
    const remote = config.remotes[0];
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.remotes)).toBe(true);
    expect(Object.isFrozen(remote)).toBe(true);
    expect(Object.isFrozen(remote?.push[0])).toBe(true);
    expect(Object.isFrozen(remote?.projects[0])).toBe(true);
    expect(() => {
      (config as { nodeId: string }).nodeId = 'other';
    }).toThrow(TypeError);
    expect(remote?.projects[0]?.matches('abc')).toBe(true);
    expect(remote?.excludedRefsPatterns[0]?.matches('refs/x/y')).toBe(true);
  });
});
