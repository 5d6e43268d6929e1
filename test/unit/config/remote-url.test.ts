import { describe, expect, it } from 'vitest';
import { expandUrl, styleProjectName, urlFitsTemplate, urlKind } from '../../../src/config/remote-url.js';

describe('expandUrl', () => {
  it('puts the project name as is with the slash style', () => {
    expect(expandUrl('git@host:org/${name}.git', 'team/app', 'slash')).toBe('git@host:org/team/app.git');
  });

  it('replaces slashes with dashes with the dash style', () => {
    expect(expandUrl('ssh://git@host/${name}.git', 'team/sub/app', 'dash')).toBe('ssh://git@host/team-sub-app.git');
  });

  it('replaces slashes with underscores with the underscore style', () => {
    expect(expandUrl('git://host/${name}', 'team/sub/app', 'underscore')).toBe('git://host/team_sub_app');
  });

  it('keeps only the last path segment with the basenameOnly style', () => {
    expect(expandUrl('/srv/mirror/${name}.git', 'team/sub/app', 'basenameOnly')).toBe('/srv/mirror/app.git');
    expect(expandUrl('/srv/mirror/${name}.git', 'app', 'basenameOnly')).toBe('/srv/mirror/app.git');
  });

  it('cuts a basenameOnly name at its last dot, as Guava getNameWithoutExtension does for Gerrit', () => {
    expect(expandUrl('file:///srv/mirror/${name}.git', 'plugins/foo.bar', 'basenameOnly')).toBe('file:///srv/mirror/foo.git');
    expect(expandUrl('https://host/${name}.git', 'x/v1.2-release', 'basenameOnly')).toBe('https://host/v1.git');
  });

  it('replaces only the first ${name}, as Gerrit does; a second one stays in the URL as written', () => {
    expect(expandUrl('file:///srv/${name}/${name}.git', 'a/b', 'slash')).toBe('file:///srv/a/b/${name}.git');
    expect(expandUrl('ssh://host/${name}-${name}', 'team/app', 'dash')).toBe('ssh://host/team-app-${name}');
  });

  it('does not expand a ${name} that comes from the project name itself', () => {
    expect(expandUrl('/srv/${name}.git', '${name}', 'slash')).toBe('/srv/${name}.git');
    expect(expandUrl('/srv/${name}/${name}.git', 'x/${name}', 'slash')).toBe('/srv/x/${name}/${name}.git');
  });

  it('percent-encodes the name in http(s) URLs but keeps its slashes', () => {
    expect(expandUrl('https://host/git/${name}.git', 'team/my app#1', 'slash')).toBe('https://host/git/team/my%20app%231.git');
  });

  it('leaves the name unencoded in ssh, scp-like, file and path URLs', () => {
    for (const template of ['ssh://h/${name}', 'git@h:${name}', 'file:///s/${name}', '/s/${name}']) {
      expect(expandUrl(template, 'my app', 'slash')).toBe(template.replace('${name}', 'my app'));
    }
  });

  it('does not interpret $-patterns in project names', () => {
    expect(expandUrl('/s/${name}.git', "a$&b$'", 'slash')).toBe("/s/a$&b$'.git");
  });

  it('returns a template without ${name} unchanged', () => {
    expect(expandUrl('/srv/archive/one.git', 'All-Users', 'slash')).toBe('/srv/archive/one.git');
  });
});

describe('styleProjectName', () => {
  it('applies each remoteNameStyle', () => {
    expect(styleProjectName('a/b/c', 'slash')).toBe('a/b/c');
    expect(styleProjectName('a/b/c', 'dash')).toBe('a-b-c');
    expect(styleProjectName('a/b/c', 'underscore')).toBe('a_b_c');
    expect(styleProjectName('a/b/c', 'basenameOnly')).toBe('c');
  });

  it.each([
    ['plugins/foo.bar', 'foo'],
    ['x/v1.2-release', 'v1'],
    ['a/b.c.d', 'b.c'],
    ['name.', 'name'],
    ['lib/app', 'app'],
    ['a.b/c', 'c'],
  ])('basenameOnly: %s → %s (last segment, up to its last dot)', (project, name) => {
    expect(styleProjectName(project, 'basenameOnly')).toBe(name);
  });

  it.each([
    ['a/.b', '.b'],
    ['a/..b', '..b'],
    ['...b', '...b'],
    ['a/.git', '.git'],
  ])('basenameOnly keeps %s whole as %s rather than naming the destination folder or its parent', (project, name) => {
    expect(styleProjectName(project, 'basenameOnly')).toBe(name);
  });

  it('leaves dots alone in the other styles', () => {
    expect(styleProjectName('plugins/foo.bar', 'slash')).toBe('plugins/foo.bar');
    expect(styleProjectName('plugins/foo.bar', 'dash')).toBe('plugins-foo.bar');
    expect(styleProjectName('plugins/foo.bar', 'underscore')).toBe('plugins_foo.bar');
  });
});

describe('urlKind', () => {
  it.each([
    ['git@host:org/x.git', 'scp'],
    ['host:x.git', 'scp'],
    ['ssh://git@host:29418/x', 'ssh'],
    ['git+ssh://host/x', 'ssh'],
    ['https://host/x', 'http'],
    ['http://host/x', 'http'],
    ['git://host/x', 'git'],
    ['file:///srv/x', 'file'],
    ['/srv/x.git', 'path'],
    ['./rel/x:y', 'path'],
    ['s3://bucket/x', 'other'],
  ])('classifies %s as %s', (url, kind) => {
    expect(urlKind(url)).toBe(kind);
  });
});

describe('urlFitsTemplate', () => {
  it('accepts what the template expands to for any project and name style', () => {
    for (const style of ['slash', 'dash', 'underscore', 'basenameOnly'] as const) {
      expect(urlFitsTemplate('ssh://git@host/${name}.git', expandUrl('ssh://git@host/${name}.git', 'team/app', style)), style).toBe(true);
    }
    expect(urlFitsTemplate('https://host/git/${name}.git', expandUrl('https://host/git/${name}.git', 'my app#1', 'slash'))).toBe(true);
  });

  it('refuses another host, prefix or suffix, and an empty name', () => {
    expect(urlFitsTemplate('ssh://git@host/${name}.git', 'ssh://git@other/app.git')).toBe(false);
    expect(urlFitsTemplate('ssh://git@host/${name}.git', 'ssh://git@host/app')).toBe(false);
    expect(urlFitsTemplate('ssh://git@host/${name}.git', 'ssh://git@host/.git')).toBe(false);
  });

  it("takes the template's regex characters literally, and a second ${name} as written", () => {
    expect(urlFitsTemplate('/srv/a+b/${name}.git', '/srv/a+b/app.git')).toBe(true);
    expect(urlFitsTemplate('/srv/a+b/${name}.git', '/srv/aab/app.git')).toBe(false);
    expect(urlFitsTemplate('file:///srv/${name}/${name}.git', expandUrl('file:///srv/${name}/${name}.git', 'a/b', 'slash'))).toBe(true);
    expect(urlFitsTemplate('file:///srv/${name}/${name}.git', 'file:///srv/a/b/a/b.git')).toBe(false);
  });

  it('matches a template without ${name} only exactly', () => {
    expect(urlFitsTemplate('ssh://host/one.git', 'ssh://host/one.git')).toBe(true);
    expect(urlFitsTemplate('ssh://host/one.git', 'ssh://host/one.git2')).toBe(false);
  });
});
