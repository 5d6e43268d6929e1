import { spawnSync } from 'node:child_process';
import { posix } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hermeticGitEnv } from '../../src/config/git-config-reader.js';
import { UsageError } from '../../src/errors.js';
import { assertProjectName, assertRefName, projectNameProblem, refNameProblem } from '../../src/task/names.js';

const gitEnv = hermeticGitEnv(process.env);

/** git's verdict on a full ref name; the name never starts with "-" here, so it cannot be read as an option. */
function gitAcceptsRef(ref: string): boolean {
  const result = spawnSync('git', ['check-ref-format', ref], { env: gitEnv });
  if (result.error) throw result.error;
  if (result.status !== 0 && result.status !== 1) throw new Error(`git check-ref-format exited ${result.status}: ${result.stderr}`);
  return result.status === 0;
}

/** Pieces that sit on the edges of git's rules, mixed with plain ones. */
const refPiece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('heads', 'tags', 'main', 'a', 'x', 'changes', '01', 'feature') },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '...',
      '.lock',
      'x.lock',
      'lock',
      '.x',
      'x.',
      '@',
      '@{',
      '{',
      '}',
      '@{u}',
      '-',
      '-x',
      ' ',
      '~',
      '^',
      ':',
      '?',
      '*',
      '[',
      ']',
      '\\',
      '\t',
      '\n',
      '\x01',
      '\x1f',
      '\x7f',
      '\u0080',
      '\u00a0',
      'é',
      '日本',
      '😀',
      '\ud800',
      '/',
      '//',
      '',
      '#',
      '%',
      '!',
      '$',
      '=',
      '+',
      ',',
      ';',
      '"',
      "'",
      '`',
      '|',
      '&',
      '<',
      '>',
      'HEAD',
      '\u200b',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
);

const component = fc.array(refPiece, { minLength: 0, maxLength: 3 }).map((parts) => parts.join(''));

const edgyRef = fc
  .tuple(
    fc.constantFrom('refs/', 'refs/', 'refs/', 'refs/heads/', 'refs/tags/', '', 'heads/', 'ref/', 'refs', '/refs/', 'Refs/'),
    fc.array(component, { minLength: 1, maxLength: 4 }),
  )
  .map(([prefix, components]) => `${prefix}${components.join('/')}`);

describe('refNameProblem', () => {
  it('agrees with git check-ref-format on every ref under refs/, and refuses every other name', () => {
    const verdicts = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(edgyRef, (ref) => {
        const ours = refNameProblem(ref) === undefined;
        if (!ref.startsWith('refs/')) {
          expect(ours).toBe(false);
          return;
        }
        if (ref.includes('\0')) {
          // argv cannot carry NUL; it is a control character, so ours must refuse it.
          expect(ours).toBe(false);
          return;
        }
        expect({ ref, accepted: ours }).toEqual({ ref, accepted: gitAcceptsRef(ref) });
        verdicts[ours ? 'accepted' : 'refused'] += 1;
      }),
      { seed: 6001, numRuns: 400 },
    );
    // The comparison is only worth something if git was asked about both kinds of names.
    expect(verdicts.accepted).toBeGreaterThan(40);
    expect(verdicts.refused).toBeGreaterThan(40);
  });

  it('accepts exactly what assertRefName accepts, and refusals are UsageErrors', () => {
    fc.assert(
      fc.property(fc.oneof(edgyRef, fc.string({ unit: 'binary' })), (ref) => {
        const problem = refNameProblem(ref);
        if (problem === undefined) expect(assertRefName(ref)).toBe(ref);
        else expect(() => assertRefName(ref)).toThrow(UsageError);
      }),
      { seed: 6002, numRuns: 500 },
    );
  });
});

const projectPiece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('team', 'app', 'a', 'All-Users', 'x.git', 'lib-1') },
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '...',
      '/',
      '//',
      '\\',
      '-',
      '~',
      '\0',
      '\n',
      '\x7f',
      ' ',
      ':',
      '%2F',
      '%2e%2e',
      '%252F',
      '..%2F',
      '$',
      '${name}',
      'é',
      '😀',
      '\ud800',
      '?',
      '#',
      '*',
      '@',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);

const hostileProject = fc.array(projectPiece, { minLength: 0, maxLength: 6 }).map((parts) => parts.join(''));

describe('projectNameProblem', () => {
  const base = '/srv/git';

  it('either refuses a name or keeps <base>/<name>.git inside base', () => {
    fc.assert(
      fc.property(hostileProject, (project) => {
        if (projectNameProblem(project) !== undefined) {
          expect(() => assertProjectName(project)).toThrow(UsageError);
          return;
        }
        expect(assertProjectName(project)).toBe(project);
        const local = posix.join(base, `${project}.git`);
        expect(local.startsWith(`${base}/`)).toBe(true);
        expect(posix.relative(base, local).split('/')).not.toContain('..');
        // The name cannot be read as an option by git either.
        expect(project.startsWith('-')).toBe(false);
      }),
      { seed: 6003, numRuns: 1000 },
    );
  });
});
