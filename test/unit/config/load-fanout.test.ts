import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configToJson, describeConfig, loadConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { ConfigError, formatConfigProblem } from '../../../src/errors.js';
import { fixturesDir } from '../../support/paths.js';

const root = join(fixturesDir, 'config-fanout');
const configOf = (name: string): string => join(root, name, 'replication.config');
const folderOf = (name: string): string => join(root, name, 'replication');
const load = (name: string): ReplicationConfig => loadConfig({ file: configOf(name), hostname: 'test-host' });

function loadError(name: string): ConfigError {
  try {
    load(name);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`${name} loaded without problems`);
}

const IGNORED_MAIN_REMOTE = (dir: string, name: string) =>
  `section ignored: ${dir}/ exists, so the remotes come only from its *.config files (Gerrit ignores this section too, logging an error); move it to ${dir}/${name}.config as [remote], or delete it`;

describe('the fan-out example of the Gerrit documentation', () => {
  const config = load('gerrit-docs');
  const dir = folderOf('gerrit-docs');

  it('has one remote per file, named after the file, in file name order', () => {
    expect(config.remotes.map((r) => [r.name, r.file])).toEqual([
      ['host-one', join(dir, 'host-one.config')],
      ['pubmirror', join(dir, 'pubmirror.config')],
    ]);
    expect(config.remotesDir).toBe(dir);
  });

  it("reads every key of a file as its remote's, multi-valued keys in order", () => {
    const pubmirror = config.remotes[1]!;
    expect(pubmirror.urls).toEqual([
      'mirror1.us.some.org:/pub/git/${name}.git',
      'mirror2.us.some.org:/pub/git/${name}.git',
      'mirror3.us.some.org:/pub/git/${name}.git',
    ]);
    expect(pubmirror.push.map((s) => s.text)).toEqual(['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*']);
    expect(pubmirror.threads).toBe(3);
    expect(config.remotes[0]!.urls).toEqual(['gerrit2@host-one.example.com:/some/path/${name}.git']);
  });

  it('takes [gerrit] and [replication] from replication.config, remote defaults included', () => {
    expect(config).toMatchObject({ autoReload: true, replicateOnStartup: false, maxRetries: 5, storePath: '/tmp/refrelay-store' });
    expect(config.remotes.map((r) => r.replicationMaxRetries)).toEqual([5, 5]);
  });

  it('warns about a Gerrit-only key in a fan-out file, naming that file', () => {
    expect(config.warnings.filter((w) => w.file.startsWith(`${dir}/`)).map(formatConfigProblem)).toEqual([
      `${join(dir, 'pubmirror.config')}: remote.pubmirror.authGroup: Gerrit access groups do not exist outside Gerrit; all refs matched by push are replicated`,
    ]);
  });

  it('says in config check where the remotes came from', () => {
    const text = describeConfig(config);
    expect(text).toContain(`remotes: 2 (from ${dir}/*.config)\n`);
    expect(text).toContain(`remote "pubmirror"\n  from: ${join(dir, 'pubmirror.config')}\n`);
    const json = configToJson(config) as { remotesDir: string; remotes: Array<{ name: string; file: string }> };
    expect(json.remotesDir).toBe(dir);
    expect(json.remotes.map((r) => r.file)).toEqual([join(dir, 'host-one.config'), join(dir, 'pubmirror.config')]);
  });
});

describe('a fan-out folder with files Gerrit skips, beside remotes left in replication.config', () => {
  const config = load('mixed');
  const dir = folderOf('mixed');

  it('loads only the remote of the well-formed file, not the stale remote of the same name', () => {
    expect(config.remotes.map((r) => [r.name, r.urls, r.file])).toEqual([['eu.mirror', ['/srv/eu/${name}.git'], join(dir, 'eu.mirror.config')]]);
  });

  it('warns once about each ignored section, naming its file: stale remotes, named sections, other sections, empty files', () => {
    expect(config.warnings.map(formatConfigProblem)).toEqual([
      `${configOf('mixed')}: remote.stale: ${IGNORED_MAIN_REMOTE(dir, 'stale')}`,
      `${configOf('mixed')}: remote.eu.mirror: ${IGNORED_MAIN_REMOTE(dir, 'eu.mirror')}`,
      `${join(dir, 'empty.config')}: (file): file ignored: it sets nothing in a [remote] section, so it defines no remote (Gerrit skips it too)`,
      `${join(dir, 'named.config')}: remote.other: file ignored: Gerrit skips a file of the fan-out folder with a named remote section (logging an error), since the file name names the remote; write [remote] instead of [remote "other"], one remote per file`,
      `${join(dir, 'settings.config')}: gerrit: file ignored: Gerrit skips a file of the fan-out folder with any section but [remote] (logging an error); move [gerrit] to replication.config`,
    ]);
  });

  it('reads neither other file names, nor sub-folders, nor a folder named like a config file', () => {
    const urls = config.remotes.flatMap((r) => r.urls).join(' ');
    expect(urls).not.toMatch(/notes|deep|inner/);
  });

  it('keeps the settings of replication.config even when a skipped file sets them', () => {
    expect(config.autoReload).toBe(false);
  });
});

describe('a fan-out folder without config files', () => {
  it('means no remotes at all: those of replication.config are ignored with a warning', () => {
    const config = load('no-config-files');
    expect(config.remotes).toEqual([]);
    expect(config.remotesDir).toBe(folderOf('no-config-files'));
    expect(config.warnings.map(formatConfigProblem)).toEqual([
      `${configOf('no-config-files')}: remote.backup: ${IGNORED_MAIN_REMOTE(folderOf('no-config-files'), 'backup')}`,
    ]);
  });
});

describe('without a fan-out folder', () => {
  it('reads the remotes of the config file, as before, each naming that file', () => {
    const file = join(fixturesDir, 'config', 'valid-minimal.config');
    const config = loadConfig({ file, hostname: 'test-host' });
    expect(config.remotesDir).toBeUndefined();
    expect(config.remotes.map((r) => [r.name, r.file])).toEqual([['backup', file]]);
    expect(describeConfig(config)).toContain('remotes: 1\n');
  });
});

describe('problems in fan-out files', () => {
  it('are all reported at once, each naming its file; a good file beside them changes nothing', () => {
    const dir = folderOf('invalid');
    expect(loadError('invalid').problems.map(formatConfigProblem)).toEqual([
      `${join(dir, 'broken.config')}: (file): git cannot parse the file: bad config line 3`,
      `${join(dir, 'typo.config')}: remote.typo.thread: unknown key (did you mean "threads"?)`,
      `${join(dir, 'typo.config')}: remote.typo.replicationDelay: expected a duration such as 15s, 2m, 500ms, got "soon"`,
    ]);
  });
});
