import { execFileSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGitConfig } from '../../../src/config/git-config-reader.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { readFanoutFiles } from '../../../src/config/read-fanout.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { ConfigError, formatConfigProblem } from '../../../src/errors.js';
import { configSite } from '../../support/config-site.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

const site = (files?: Record<string, string>) => configSite(tempDir('refrelay-fanout'), files);

const load = (config: string): ReplicationConfig => loadConfig({ file: config, hostname: 'test-host' });

function problemsOf(config: string): string[] {
  try {
    load(config);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatConfigProblem);
    throw error;
  }
  return [];
}

describe('reading the files of the fan-out folder', () => {
  it('reads each file as git reads it alone, whatever the file before it left open', () => {
    const { dir } = site({
      // No final newline, and a `\` continuation at the very end: neither reaches the next file.
      'a.config': '[remote]\n  url = /srv/a/${name}.git\n  projects = one\\',
      'b.config': '[Remote]\r\n  url = /srv/b/${name}.git\r\n',
      // A key before the first section: git lists it without a section; the separator must not take it.
      'c.config': 'url = /srv/stray\n[remote]\n  url = "/srv/c/${name}.git" ; inline comment\n',
      'd.config': '# comment only\n',
    });
    const files = ['a', 'b', 'c', 'd'].map((name) => join(dir, `${name}.config`));
    const alone = files.map((file) => ({ file, ...readGitConfig(file) }));
    expect(readFanoutFiles(files)).toEqual(alone);
    expect(alone.map((read) => read.entries.map((e) => `${e.section}.${e.name}=${e.value}`))).toEqual([
      ['remote.url=/srv/a/${name}.git', 'remote.projects=one'],
      ['remote.url=/srv/b/${name}.git'],
      ['remote.url=/srv/c/${name}.git'],
      [],
    ]);
  });

  it('names the file git cannot parse, and still reads the others', () => {
    const { dir } = site({ 'a.config': '[remote]\n  url = /srv/a/${name}.git\n', 'b.config': '[remote]\n  url = "/srv/b/${name}.git\n' });
    const read = readFanoutFiles([join(dir, 'a.config'), join(dir, 'b.config')]);
    expect(read.map((r) => [r.entries.length, r.problems.map(formatConfigProblem)])).toEqual([
      [1, []],
      [0, [`${join(dir, 'b.config')}: (file): git cannot parse the file: bad config line 2`]],
    ]);
  });

  it('reads 150 files with one git run for all of them (enqueue loads the config on every push)', () => {
    const files: Record<string, string> = {};
    for (let n = 0; n < 150; n++) files[`m${String(n).padStart(3, '0')}.config`] = `[remote]\n  url = /srv/m${n}/\${name}.git\n`;
    const { config } = site(files);
    const bin = tempDir('refrelay-git-count');
    const count = join(bin, 'runs');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho run >> "${count}"\nexec "${realGit}" "$@"\n`, { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    let loaded: ReplicationConfig;
    try {
      loaded = load(config);
    } finally {
      process.env.PATH = path;
    }
    expect(loaded.remotes).toHaveLength(150);
    expect(loaded.remotes[149]).toMatchObject({ name: 'm149', urls: ['/srv/m149/${name}.git'] });
    // One run for replication.config, one for the whole folder.
    expect(readFileSync(count, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('follows a symlink to a file and leaves out a dangling one', () => {
    const { config, dir } = site({ 'a.config': '[remote]\n  url = /srv/a/${name}.git\n' });
    const elsewhere = join(tempDir('refrelay-fanout-target'), 'real.conf');
    writeFileSync(elsewhere, '[remote]\n  url = /srv/linked/${name}.git\n');
    symlinkSync(elsewhere, join(dir, 'linked.config'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.config'));
    expect(load(config).remotes.map((r) => [r.name, r.urls])).toEqual([
      ['a', ['/srv/a/${name}.git']],
      ['linked', ['/srv/linked/${name}.git']],
    ]);
  });

  it('refuses a file named replication beside the config file, as Gerrit fails to start then', () => {
    const { config, dir } = site();
    writeFileSync(dir, 'not a folder\n');
    expect(problemsOf(config)).toEqual([
      `${dir}: (file): not a folder: with anything named "replication" beside the config file Gerrit reads the remotes from that folder, and fails to start when it is a file; remove or rename it`,
    ]);
  });

  it('is not looked for when there is no folder: the remotes of the config file count', () => {
    const { config } = site();
    writeFileSync(config, '[replication]\n  storePath = /tmp/refrelay-store\n[remote "backup"]\n  url = /srv/backup/${name}.git\n');
    const loaded = load(config);
    expect(loaded.remotes.map((r) => r.name)).toEqual(['backup']);
    expect(loaded.remotesDir).toBeUndefined();
    expect(loaded.warnings).toEqual([]);
  });
});
