import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_PROBLEM_KEY, hermeticGitEnv, parseGitConfigList, readGitConfig } from '../../../src/config/git-config-reader.js';
import { fixturesDir } from '../../support/paths.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('parseGitConfigList', () => {
  it('splits key and value records, one entry per value of a multi-valued key', () => {
    const output = 'remote.origin.url\na\0remote.origin.url\nb\0replication.storepath\n/x\0';
    expect(parseGitConfigList(output)).toEqual([
      { section: 'remote', subsection: 'origin', name: 'url', value: 'a' },
      { section: 'remote', subsection: 'origin', name: 'url', value: 'b' },
      { section: 'replication', subsection: undefined, name: 'storepath', value: '/x' },
    ]);
  });

  it('keeps dots and slashes of the subsection, splitting at the first and last dot', () => {
    expect(parseGitConfigList('remote.eu.mirror/x.y.url\nu\0')).toEqual([{ section: 'remote', subsection: 'eu.mirror/x.y', name: 'url', value: 'u' }]);
  });

  it('reads a record without a newline as a bare boolean key set to true', () => {
    expect(parseGitConfigList('remote.a.mirror\0')).toEqual([{ section: 'remote', subsection: 'a', name: 'mirror', value: 'true' }]);
  });

  it('keeps an empty value and newlines inside a value', () => {
    expect(parseGitConfigList('remote.a.url\n\0remote.a.push\nx\ny\0').map((e) => e.value)).toEqual(['', 'x\ny']);
  });
});

describe('readGitConfig', () => {
  it('reads a real file through git, with quoting, comments and subsection case kept', () => {
    const file = join(tempDir(), 'c.config');
    writeFileSync(
      file,
      [
        '[Remote "Eu.Mirror"]',
        '  URL = a ; comment',
        '  url = "b;c # not a comment"',
        '  push = "say \\"hi\\""',
        '  Mirror',
        '  line = one \\',
        'two',
        '',
      ].join('\n'),
    );
    const result = readGitConfig(file);
    expect(result.problems).toEqual([]);
    expect(result.entries).toEqual([
      { section: 'remote', subsection: 'Eu.Mirror', name: 'url', value: 'a' },
      { section: 'remote', subsection: 'Eu.Mirror', name: 'url', value: 'b;c # not a comment' },
      { section: 'remote', subsection: 'Eu.Mirror', name: 'push', value: 'say "hi"' },
      { section: 'remote', subsection: 'Eu.Mirror', name: 'mirror', value: 'true' },
      { section: 'remote', subsection: 'Eu.Mirror', name: 'line', value: 'one two' },
    ]);
  });

  it('turns a missing file into a (file) problem instead of throwing', () => {
    const file = join(tempDir(), 'missing.config');
    expect(readGitConfig(file)).toEqual({
      entries: [],
      problems: [{ file, key: FILE_PROBLEM_KEY, message: 'cannot read the file: No such file or directory' }],
    });
  });

  it('turns a syntax error into a (file) problem quoting git line number', () => {
    const file = join(fixturesDir, 'config', 'invalid-syntax.config');
    expect(readGitConfig(file).problems).toEqual([{ file, key: '(file)', message: 'git cannot parse the file: bad config line 5' }]);
  });

  it('does not follow include.path, so only the named file is read', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'other.config'), '[remote "x"]\n url = /x\n');
    writeFileSync(join(dir, 'c.config'), '[include]\n path = other.config\n');
    expect(readGitConfig(join(dir, 'c.config')).entries).toEqual([{ section: 'include', subsection: undefined, name: 'path', value: 'other.config' }]);
  });
});

describe('hermeticGitEnv', () => {
  it('shuts out system, global and inherited command-line git config', () => {
    const env = hermeticGitEnv({
      PATH: '/bin',
      GIT_CONFIG_PARAMETERS: "'a.b=c'",
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'a.b',
      GIT_CONFIG_GLOBAL: '/home/u/.gitconfig',
      GIT_CONFIG: '/x',
    });
    expect(env).toEqual({ PATH: '/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' });
  });
});
