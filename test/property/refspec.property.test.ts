import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapRef, mapRefThroughRefspecs, parseRefspec } from '../../src/config/refspec.js';
import type { Refspec } from '../../src/config/types.js';
import { refNameProblem } from '../../src/task/names.js';

/** Pieces of ref names, many of them on the edges of git's rules. */
const edgyPiece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('refs/', 'heads/', 'tags/', 'main', 'a', 'b', 'x', 'release-', 'v', '1') },
  {
    weight: 4,
    arbitrary: fc.constantFrom('*', '/', '.', '..', '.lock', 'lock', '@', '@{', '{', '}', '+', ':', '^', '~', '?', '[', '\\', ' ', '\t', '\0', '-', 'é', '😀'),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
);

const edgyText = fc.array(edgyPiece, { minLength: 0, maxLength: 8 }).map((parts) => parts.join(''));

/** Refspec-shaped text: `[+]src[:dst]` with edge-case pieces on both sides, plus plain noise. */
const refspecText = fc.oneof(
  fc
    .tuple(fc.constantFrom('', '+', ' ', ' +', '^', '++'), edgyText, fc.constantFrom('', ':', '::'), edgyText)
    .map(([lead, src, colon, dst]) => `${lead}${src}${colon}${colon === '' ? '' : dst}`),
  fc.string({ unit: 'binary' }),
);

/** Characters a valid pattern may hold around its "*": "." and "@" and "{" are legal on their own. */
const patternPiece = fc.constantFrom('a', 'b', 'x', 'heads', 'tags', 'release-', 'v', '1', '.', '-', '_', '@', '{', '}', 'lock', 'é', '/');

/** `refs/…` with one "*" anywhere after `refs/` (mid-component, at a component start, before a "/"), or none. */
const patternSide = (withStar: boolean): fc.Arbitrary<string> =>
  fc
    .tuple(fc.array(patternPiece, { minLength: 0, maxLength: 6 }), fc.array(patternPiece, { minLength: 0, maxLength: 6 }))
    .map(([before, after]) => `refs/${before.join('')}${withStar ? '*' : ''}${after.join('')}`);

const validRefspec: fc.Arbitrary<Refspec> = fc
  .tuple(fc.boolean(), fc.boolean(), fc.boolean())
  .chain(([force, withStar, sameName]) => fc.tuple(fc.constant(force), patternSide(withStar), sameName ? fc.constant(undefined) : patternSide(withStar)))
  .map(([force, src, dst]) => parseRefspec(`${force ? '+' : ''}${src}${dst === undefined ? '' : `:${dst}`}`))
  .filter((parsed): parsed is Refspec => typeof parsed !== 'string');

/** What a "*" may stand for: anything, with a bias toward what makes the other side invalid. */
const matchedPart = fc.oneof(
  fc
    .array(fc.constantFrom('a', 'b', '.', '..', '/', '//', '.lock', 'lock', '@', '{', '}', '-', 'x.', '.x', 'é', '*', ' '), { minLength: 1, maxLength: 4 })
    .map((parts) => parts.join('')),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 4 }),
);

/** A refspec and a ref that its source pattern matches (or, for an exact refspec, its source). */
const specAndMatchingRef = fc.tuple(validRefspec, matchedPart).map(([spec, part]) => ({ spec, ref: spec.src.replace('*', () => part) }));

const anyRef = fc.oneof(
  fc.array(edgyPiece, { minLength: 1, maxLength: 8 }).map((parts) => `refs/${parts.join('')}`),
  fc.string({ unit: 'binary' }),
);

describe('parseRefspec', () => {
  it('returns a Refspec or an "invalid refspec" message for any text, never throws', () => {
    fc.assert(
      fc.property(refspecText, (text) => {
        const parsed = parseRefspec(text);
        if (typeof parsed === 'string') {
          expect(parsed.startsWith(`invalid refspec "${text}": `)).toBe(true);
          return;
        }
        expect(Object.keys(parsed).sort()).toEqual(['dst', 'force', 'src', 'text']);
      }),
      { seed: 3001, numRuns: 2000 },
    );
  });

  it('gives both sides valid ref names under refs/ (one "*" each or none), and reads its own text back', () => {
    fc.assert(
      fc.property(fc.oneof(validRefspec, refspecText.map(parseRefspec)), (spec) => {
        if (typeof spec === 'string') return;
        const stars = (side: string): number => side.split('*').length - 1;
        expect(stars(spec.src)).toBe(stars(spec.dst));
        expect(stars(spec.src)).toBeLessThanOrEqual(1);
        // With "*" replaced by a plain component character each side is a valid ref name.
        expect(refNameProblem(spec.src.replace('*', 'x'))).toBeUndefined();
        expect(refNameProblem(spec.dst.replace('*', 'x'))).toBeUndefined();
        expect(parseRefspec(spec.text)).toEqual(spec);
      }),
      { seed: 3002, numRuns: 1000 },
    );
  });
});

describe('mapRefThroughRefspecs', () => {
  it('maps any ref to no match or to a destination that is a valid ref name (git refuses a whole push over one bad name)', () => {
    fc.assert(
      fc.property(
        fc.array(validRefspec, { minLength: 1, maxLength: 3 }),
        fc.oneof(
          anyRef,
          specAndMatchingRef.map(({ ref }) => ref),
        ),
        (specs, ref) => {
          const mapped = mapRefThroughRefspecs(specs, ref);
          if (mapped === undefined) return;
          expect({ ref, dst: mapped.dst, problem: refNameProblem(mapped.dst) }).toEqual({ ref, dst: mapped.dst, problem: undefined });
        },
      ),
      { seed: 3003, numRuns: 1500 },
    );
  });

  it("maps a valid ref its refspec matches to a valid destination, with that refspec's force flag", () => {
    let mappedCount = 0;
    fc.assert(
      fc.property(specAndMatchingRef, ({ spec, ref }) => {
        fc.pre(refNameProblem(ref) === undefined);
        const dst = mapRef(spec, ref);
        if (dst === undefined) return;
        mappedCount += 1;
        expect({ spec: spec.text, ref, dst, problem: refNameProblem(dst) }).toEqual({ spec: spec.text, ref, dst, problem: undefined });
        expect(mapRefThroughRefspecs([spec], ref)).toEqual({ dst, force: spec.force });
      }),
      { seed: 3004, numRuns: 1500 },
    );
    expect(mappedCount).toBeGreaterThan(300);
  });

  it('maps the source of an exact refspec to its destination, and only that ref', () => {
    fc.assert(
      fc.property(
        validRefspec.filter((spec) => !spec.src.includes('*')),
        anyRef,
        (spec, ref) => {
          expect(mapRef(spec, spec.src)).toBe(spec.dst);
          if (ref !== spec.src) expect(mapRef(spec, ref)).toBeUndefined();
        },
      ),
      { seed: 3005, numRuns: 500 },
    );
  });

  it('reads a wildcard mapping backwards to the ref it came from (mirror deletes rely on it)', () => {
    fc.assert(
      fc.property(
        specAndMatchingRef.filter(({ spec }) => spec.src.includes('*')),
        ({ spec, ref }) => {
          fc.pre(refNameProblem(ref) === undefined);
          const dst = mapRef(spec, ref);
          if (dst === undefined) return;
          expect(mapRef({ ...spec, src: spec.dst, dst: spec.src }, dst)).toBe(ref);
        },
      ),
      { seed: 3006, numRuns: 1000 },
    );
  });

  it('does not map a ref to an invalid destination name (regressions)', () => {
    const spec = (text: string): Refspec => parseRefspec(text) as Refspec;
    expect(mapRef(spec('refs/*a:refs/*'), 'refs/a.a')).toBeUndefined(); // would be "refs/a."
    expect(mapRef(spec('refs/heads/a*:refs/t/*'), 'refs/heads/a.b')).toBeUndefined(); // "refs/t/.b"
    expect(mapRef(spec('refs/heads*:refs/t/*'), 'refs/heads/x')).toBeUndefined(); // "refs/t//x"
    expect(mapRef(spec('refs/heads/*x:refs/t/*lock'), 'refs/heads/a.x')).toBeUndefined(); // "refs/t/a.lock"
    expect(mapRefThroughRefspecs([spec('refs/*:refs/*')], 'refs/.lock')).toBeUndefined();
    // The next refspec still gets its chance.
    expect(mapRefThroughRefspecs([spec('refs/*a:refs/*'), spec('refs/*:refs/m/*')], 'refs/a.a')).toEqual({ dst: 'refs/m/a.a', force: false });
  });
});
