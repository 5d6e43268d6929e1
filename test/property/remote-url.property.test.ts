import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandUrl, REMOTE_NAME_STYLES, styleProjectName, urlKind } from '../../src/config/remote-url.js';
import type { RemoteNameStyle } from '../../src/config/types.js';
import { projectNameProblem } from '../../src/task/names.js';
import { createTarget } from '../../src/push/create-repository.js';

/** A string's UTF-8 bytes, one char per byte. */
function bytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

/**
 * The path git itself opens or asks the remote side for, as bytes (one char per
 * byte). git percent-decodes a `scheme://` URL before it splits off the path
 * (connect.c, parse_connect_url); plain paths are taken verbatim.
 */
function pathGitUses(url: string): string {
  const raw = bytes(url);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw);
  if (!scheme) return raw;
  const decoded = raw.replace(/%([0-9a-fA-F]{2})/g, (_all, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  const afterScheme = decoded.slice(scheme[0].length);
  const slash = afterScheme.indexOf('/');
  return slash < 0 ? '/' : afterScheme.slice(slash);
}

/** The string with each lone surrogate replaced by U+FFFD (String#toWellFormed). */
function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** Where a `${name}` template puts every project: the folder before the variable. */
const templates: readonly { template: string; base: string }[] = [
  { template: 'file:///srv/git/${name}.git', base: '/srv/git' },
  { template: '/srv/git/${name}.git', base: '/srv/git' },
  { template: 'ssh://host/srv/${name}.git', base: '/srv' },
  { template: 'ssh://git@host:2222/srv/mirror/${name}.git', base: '/srv/mirror' },
  { template: 'git://host/pub/${name}', base: '/pub' },
  { template: 'git+ssh://host/srv/${name}.git', base: '/srv' },
];

const namePiece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('team', 'app', 'All-Users', 'lib', 'x') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '/',
      '%',
      '%2F',
      '%2f',
      '%2e',
      '%2E%2E',
      '%25',
      '%5C',
      '..%2F',
      '%2F..',
      '%00',
      ' ',
      '#',
      '?',
      ':',
      '@',
      '~',
      '$',
      '${name}',
      'é',
      '😀',
      '-',
      '\\',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 5 }) },
);

/** Project names projectNameProblem accepts, many of them close to its edges. */
const acceptedProject = fc
  .array(namePiece, { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(''))
  .filter((name) => projectNameProblem(name) === undefined);

const style = fc.constantFrom<RemoteNameStyle>(...REMOTE_NAME_STYLES);

describe('expandUrl', () => {
  it('keeps the path git uses under the template folder for every accepted project name and style', () => {
    fc.assert(
      fc.property(acceptedProject, fc.constantFrom(...templates), style, (project, { template, base }, nameStyle) => {
        const url = expandUrl(template, project, nameStyle);
        const used = posix.normalize(pathGitUses(url));
        expect({ project, url, used, inside: used.startsWith(`${base}/`) }).toMatchObject({ inside: true });
        expect(posix.relative(base, used).split('/')).not.toContain('..');
      }),
      { seed: 4001, numRuns: 1500 },
    );
  });

  it('makes git open exactly <base>/<styled name>: a "%" in a name is not decoded into something else', () => {
    fc.assert(
      fc.property(acceptedProject, fc.constantFrom(...templates), style, (project, { template }, nameStyle) => {
        const url = expandUrl(template, project, nameStyle);
        const expected = pathGitUses(template.replaceAll('${name}', '\x01')).replace('\x01', bytes(styleProjectName(project, nameStyle)));
        expect({ project, url, path: pathGitUses(url) }).toEqual({ project, url, path: expected });
      }),
      { seed: 4002, numRuns: 800 },
    );
  });

  it('applies remoteNameStyle as documented: slash as is, "/" to "-" or "_", or the last segment up to its last dot', () => {
    fc.assert(
      fc.property(acceptedProject, (project) => {
        expect(styleProjectName(project, 'slash')).toBe(project);
        expect(styleProjectName(project, 'dash')).toBe(project.split('/').join('-'));
        expect(styleProjectName(project, 'underscore')).toBe(project.split('/').join('_'));
        const last = project.split('/').at(-1) ?? '';
        const guava = last.includes('.') ? last.slice(0, last.lastIndexOf('.')) : last;
        const basename = styleProjectName(project, 'basenameOnly');
        expect(basename).toBe(['', '.', '..'].includes(guava) ? last : guava);
        expect(['', '.', '..']).not.toContain(basename);
        for (const flat of ['dash', 'underscore', 'basenameOnly'] as const) {
          expect(styleProjectName(project, flat)).not.toContain('/');
        }
      }),
      { seed: 4003, numRuns: 500 },
    );
  });

  it('returns a string for any template and any project name, never throws (task files are untrusted input)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...templates.map((t) => t.template), 'https://host/${name}.git', 'http://h/${name}'), fc.string({ unit: 'binary' })),
        fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('\ud800', 'a/\udfff', '\udc00\ud800', 'ok/😀')),
        style,
        (template, project, nameStyle) => {
          expect(typeof expandUrl(template, project, nameStyle)).toBe('string');
        },
      ),
      { seed: 4007, numRuns: 1000 },
    );
  });

  it('percent-encodes every http(s) path segment, so the URL path decodes back to the styled name', () => {
    fc.assert(
      fc.property(acceptedProject, fc.constantFrom('https://host/git/${name}.git', 'http://user@host:8080/${name}'), style, (project, template, nameStyle) => {
        const url = expandUrl(template, project, nameStyle);
        expect(urlKind(url)).toBe('http');
        const parsed = new URL(url);
        expect(parsed.hash).toBe('');
        expect(parsed.search).toBe('');
        const prefix = new URL(template.replace('${name}', 'X')).pathname.split('X')[0] ?? '';
        // A lone surrogate has no UTF-8 form; it is sent as U+FFFD, as Node writes it to argv and files.
        expect(decodeURIComponent(parsed.pathname)).toBe(
          wellFormed(`${prefix}${styleProjectName(project, nameStyle)}${template.endsWith('.git') ? '.git' : ''}`),
        );
      }),
      { seed: 4004, numRuns: 500 },
    );
  });

  it('returns a template without ${name} unchanged, whatever the project', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }).filter((t) => !t.includes('${name}')),
        fc.string({ unit: 'binary' }),
        style,
        (template, project, nameStyle) => {
          expect(expandUrl(template, project, nameStyle)).toBe(template);
        },
      ),
      { seed: 4005, numRuns: 300 },
    );
  });

  it('encodes a lone surrogate in an http(s) project name instead of throwing URIError (regression)', () => {
    expect(expandUrl('https://host/${name}.git', '\ud800', 'slash')).toBe('https://host/%EF%BF%BD.git');
  });

  it('keeps a project name with "%" at its literal path in ssh and file URLs (regression)', () => {
    expect(pathGitUses(expandUrl('file:///srv/git/${name}.git', '..%2Fevil', 'slash'))).toBe('/srv/git/..%2Fevil.git');
    expect(pathGitUses(expandUrl('ssh://host/srv/${name}.git', 'a%2F..%2F..%2Fetc', 'slash'))).toBe('/srv/a%2F..%2F..%2Fetc.git');
    expect(expandUrl('/srv/git/${name}.git', '..%2Fevil', 'slash')).toBe('/srv/git/..%2Fevil.git');
  });
});

describe('createTarget (src/push/create-repository.ts)', () => {
  // git percent-decodes ssh:// and file:// URLs; createTarget must create the repository at the
  // path git then opens (project `%2E%2E` → `file:///srv/git/%252E%252E.git` → `/srv/git/%2E%2E.git`).
  it('creates the repository at the path git pushes to, for ssh:// and file:// URLs', () => {
    fc.assert(
      fc.property(
        acceptedProject,
        fc.constantFrom('file:///srv/git/${name}.git', 'ssh://host/srv/${name}.git', 'ssh://git@host:2222/srv/${name}.git'),
        style,
        (project, template, nameStyle) => {
          const url = expandUrl(template, project, nameStyle);
          const target = createTarget(url, '/srv/src/x.git');
          expect(target.kind).not.toBe('impossible');
          if (target.kind !== 'impossible') expect(bytes(target.path)).toBe(pathGitUses(url));
        },
      ),
      { seed: 4006, numRuns: 300 },
    );
  });
});
