import { describe, expect, it } from 'vitest';
import { expandUrl } from '../../../src/config/remote-url.js';
import { jgitAsciiString } from '../../../src/intake/jgit-uri.js';

/** Gerrit's URIish equality, as gerrit-task-owner.ts applies it: a password never counts. */
function sameJgitUri(a: string, b: string): boolean {
  const left = jgitAsciiString(a);
  return left !== undefined && left === jgitAsciiString(b);
}

/**
 * Expected values are what JGit's `new URIish(input).toASCIIString()` prints (org.eclipse.jgit
 * 7.8.0, run once by hand to write this table): lower-case `%xx` for controls, space, `%` and
 * every non-ASCII UTF-8 byte in the path and host, reserved characters escaped too in the user,
 * the password dropped, scp-like and plain paths as written.
 */
const ASCII_FORMS: Array<[string, string | undefined]> = [
  ['https://host/team/my project.git', 'https://host/team/my%20project.git'],
  ['https://host/team/my%20project.git', 'https://host/team/my%20project.git'],
  ['https://host/caf%C3%A9.git', 'https://host/caf%c3%a9.git'],
  ['https://host/café.git', 'https://host/caf%c3%a9.git'],
  ['https://host/c%2B%2B.git', 'https://host/c++.git'],
  ['https://host/a&b=c+d.git', 'https://host/a&b=c+d.git'],
  ['https://user:pw@host/x.git', 'https://user@host/x.git'],
  ['https://us%40er:p%41w@host:8443/x.git', 'https://us%40er@host:8443/x.git'],
  ['https://host/tab\tx', 'https://host/tab%09x'],
  ['ssh://git@host:29418/team/my project.git', 'ssh://git@host:29418/team/my%20project.git'],
  ['ssh://us er@host/x', 'ssh://us%20er@host/x'],
  ['ssh://host/~user/x', 'ssh://host/~user/x'],
  ['ssh://[::1]:22/x', 'ssh://[::1]:22/x'],
  ['git://host/team/my project.git', 'git://host/team/my%20project.git'],
  ['file:///srv/team/my project.git', 'file:///srv/team/my%20project.git'],
  ['file:/srv/a b.git', 'file:///srv/a%20b.git'],
  ['file://C:/x', 'file:///C:/x'],
  ['git@host:team/my project.git', 'git@host:team/my project.git'],
  ['git@host:/srv/café.git', 'git@host:/srv/café.git'],
  ['host:x', 'host:x'],
  ['/srv/team/my project.git', '/srv/team/my project.git'],
  ['relative/path', 'relative/path'],
  // JGit's scheme pattern is lower-case only: this parses as a local path.
  ['HTTPS://host/x', 'HTTPS://host/x'],
  // Bytes that are not UTF-8 are read as ISO-8859-1 (RawParseUtils.decode), then escaped as UTF-8.
  ['https://host/a%ff.git', 'https://host/a%c3%bf.git'],
  ['ssh://h/%e9t%C3%A9', 'ssh://h/%c3%a9t%c3%83%c2%a9'],
  // What JGit throws on: a `%` without two hex digits, a port beyond int, nothing at all.
  ['ssh://host/50%off.git', undefined],
  ['ssh://host/x%4', undefined],
  ['ssh://host:99999999999/x', undefined],
  ['', undefined],
];

describe('jgitAsciiString (JGit URIish.toASCIIString)', () => {
  it.each(ASCII_FORMS)('%j prints as %j', (input, expected) => {
    expect(jgitAsciiString(input)).toBe(expected);
  });

  it('refuses a URI longer than any task file carries instead of scanning it', () => {
    expect(jgitAsciiString(`https://${'a'.repeat(5000)}/x.git`)).toBeUndefined();
  });
});

/**
 * The task `uri` Gerrit's plugin stores (Destination.getURI, then toASCIIString; printed by JGit
 * 7.8.0 with Guava's path segment escaper as the plugin uses it) against refrelay's own expansion
 * of the same URL template for the same project.
 */
const GERRIT_STORED: Array<[template: string, project: string, stored: string]> = [
  ['https://host/${name}.git', 'team/my project', 'https://host/team/my%20project.git'],
  ['https://host/${name}.git', 'café', 'https://host/caf%c3%a9.git'],
  ['https://host/${name}.git', 'c++', 'https://host/c++.git'],
  ['https://user:pw@host/${name}.git', 'a&b=c', 'https://user@host/a&b=c.git'],
  ['https://host/${name}.git', '50%off', 'https://host/50%25off.git'],
  ['ssh://git@host:29418/${name}.git', 'team/my project', 'ssh://git@host:29418/team/my%20project.git'],
  ['ssh://host/${name}.git', 'café', 'ssh://host/caf%c3%a9.git'],
  ['git@host:${name}.git', 'team/my project', 'git@host:team/my project.git'],
  ['git://host/${name}.git', 'café', 'git://host/caf%c3%a9.git'],
  ['file:///srv/${name}.git', 'team/my project', 'file:///srv/team/my%20project.git'],
  ['/srv/${name}.git', 'café', '/srv/café.git'],
];

describe("sameJgitUri: a stored Gerrit uri and refrelay's expansion of the same URL", () => {
  it.each(GERRIT_STORED)('%s for %j is the destination Gerrit stored as %s', (template, project, stored) => {
    const ours = expandUrl(template, project, 'slash');
    expect(sameJgitUri(ours, stored)).toBe(true);
    expect(sameJgitUri(stored, ours)).toBe(true);
  });

  it('tells different destinations apart: another project, host, port, user or scheme', () => {
    const stored = 'ssh://git@host:29418/team/my%20project.git';
    for (const other of [
      'ssh://git@host:29418/team/my%20project2.git',
      'ssh://git@other:29418/team/my%20project.git',
      'ssh://git@host:29419/team/my%20project.git',
      'ssh://gerrit@host:29418/team/my%20project.git',
      'git://git@host:29418/team/my%20project.git',
      'ssh://git@host:29418/team/my+project.git',
    ]) {
      expect(sameJgitUri(other, stored)).toBe(false);
    }
  });

  it('never takes a project JGit decodes differently for the one refrelay pushes (a %xx in an ssh name)', () => {
    // Gerrit stores ssh://host/aAb.git for project a%41b; refrelay pushes to a%2541b, another repository.
    expect(sameJgitUri(expandUrl('ssh://host/${name}.git', 'a%41b', 'slash'), 'ssh://host/aAb.git')).toBe(false);
  });

  it('matches nothing JGit cannot parse', () => {
    expect(sameJgitUri('ssh://host/50%off.git', 'ssh://host/50%off.git')).toBe(false);
  });
});
