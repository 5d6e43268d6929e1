import { describe, expect, it } from 'vitest';
import { compileJavaRegex, isJavaRegexProblem } from '../../../src/config/java-regex.js';
import type { JavaRegex } from '../../../src/config/types.js';

// Every verdict below was recorded from java.util.regex (Java 25: Pattern.compile(p).matcher(s).matches(),
// and PatternSyntaxException's description and index). scripts/java-regex-differential.mjs re-checks
// the translator against a local JDK on thousands of random patterns.

function regex(pattern: string): JavaRegex {
  const compiled = compileJavaRegex(pattern);
  if (isJavaRegexProblem(compiled)) throw new Error(compiled.message);
  return compiled;
}

type Case = readonly [pattern: string, matches: readonly string[], misses: readonly string[]];

function check(cases: readonly Case[]): void {
  it.each(cases)('%s', (pattern, matches, misses) => {
    const compiled = regex(pattern);
    for (const input of matches) expect(compiled.matches(input), JSON.stringify(input)).toBe(true);
    for (const input of misses) expect(compiled.matches(input), JSON.stringify(input)).toBe(false);
  });
}

describe('compileJavaRegex matches whole inputs, as String.matches does', () => {
  check([
    ['^team/.*', ['team/a', 'team/'], ['xteam/a', 'team/a\n']],
    ['^(foo|bar)/.*', ['foo/x', 'bar/'], ['foobar/x']],
    ['^a|b', ['a', 'b'], ['ab']],
    ['refs/changes/.*', ['refs/changes/01/1/1'], ['refs/heads/refs/changes/x']],
    ['refs/heads/(?!main$).*', ['refs/heads/dev'], ['refs/heads/main']],
    ['^a$', ['a'], ['a\n']],
    ['^a\\z', ['a'], ['a\n']],
    ['^\\Gx', ['x'], []],
    ['^(?<name>x)y', ['xy'], []],
    ['^*', [], ['x']],
  ]);
});

describe('compileJavaRegex keeps Java meanings that JavaScript spells differently', () => {
  describe('quoting and escapes', () => {
    check([
      ['^\\Qteam.x\\E/.*', ['team.x/a'], ['teamyx/a', 'Qteam.xE/a']],
      ['^[\\Q]-\\E]+', [']-]'], ['a']],
      ['^\\0101\\cA\\e\\a\\t', ['A\u0001\u001b\u0007\t'], []],
      ['^\\x{1F600}|^\\x41', ['\ud83d\ude00', 'A'], []],
      ['^\\uD83D\\uDE00', ['\ud83d\ude00'], []],
    ]);
  });

  describe('character classes: nesting, && and a leading ]', () => {
    check([
      ['^[a-z&&[^aeiou]]+', ['bcd'], ['bad', 'BCD']],
      ['^[a-z&&def]+', ['def'], ['abc']],
      ['^[^a-c[x]]', ['d'], ['x', 'b']],
      ['^[]a]+', [']a]'], ['b']],
      ['^[\\d-z]+', ['1-z'], ['a']],
      ['^[\\p{L}&&[^a-z]]', ['A'], ['a']],
    ]);
  });

  describe('ASCII \\w \\d \\s, Perl \\h \\v, Java line ends', () => {
    check([
      ['^\\w+', ['abc_1'], ['\u00e9t\u00e9']],
      ['^\\d', ['1'], ['\u0661']],
      ['^\\s', [' ', '\u000b'], ['\u00a0']],
      ['^\\h', ['\u00a0'], ['\n']],
      ['^\\v', ['\u000b', '\n', '\u2028'], [' ']],
      ['^a.b', ['axb', 'a\ud83d\ude00b'], ['a\nb', 'a\u0085b']],
      ['^(?s)a.b', ['a\nb'], []],
      ['^(?m)a$\\n^b', ['a\nb'], []],
      ['^\\R', ['\r\n', '\n', '\r', '\u0085'], []],
      ['^a\\b-', ['a-'], ['ab']],
      ['^a\\B', [], ['a']],
    ]);
  });

  describe('inline flags: ASCII-only case folding, scoped to the group', () => {
    check([
      ['^(?i)team/[a-z]+', ['TEAM/Abc', 'team/abc'], ['TEAM/\u00e9']],
      ['^(?i:k)', ['k', 'K'], ['\u212a']],
      ['^(?i)[^a]', ['b'], ['A']],
      ['^(?i)[K-k]+', ['a', 'Z', '_'], []],
      ['^(?i)\u00c9', ['\u00c9'], ['\u00e9']],
      ['^a(?i)b|c', ['aB', 'C', 'c'], []],
      ['^(a(?i)b)c', ['aBc'], ['aBC']],
      ['^(?i)\\p{Lu}', ['a'], ['1']],
      ['^(?x) a b # comment', ['ab'], ['a b']],
      ['^(?x)[a b]+', ['ab'], [' ']],
    ]);
  });

  describe('POSIX and Unicode properties', () => {
    check([
      ['^\\p{Alpha}+', ['abc'], ['\u00e9']],
      ['^\\p{IsAlphabetic}+', ['\u00e9'], ['1']],
      ['^\\p{Lu}', ['A'], ['a']],
      ['^\\p{IsLatin}+', ['\u00c9\u00e9a'], ['\u03b1']],
      ['^\\pL\\p{Nd}', ['a1'], ['1a']],
    ]);
  });

  describe('possessive quantifiers, atomic groups, a quantifier after a quantifier', () => {
    check([
      ['^a*+a', [], ['aaa', 'a']],
      ['^(?>a*)a', [], ['aaa']],
      ['^(a|ab)++c', ['ac'], ['abc']],
      ['^a{2,}+', ['aa'], ['a']],
      ['^a{2}{3}', ['aa'], ['aaaaaa']],
      ['^(?<=^)team', ['team'], []],
      ['^(?<!x)y', ['y'], []],
    ]);
  });
});

describe("compileJavaRegex refuses what Java refuses, with Java's description and index", () => {
  it.each([
    ['^(', 'Unclosed group near index 2'],
    ['^[a', 'Unclosed character class near index 2'],
    ['^a{2,1}', 'Illegal repetition range near index 6'],
    ['^a**', "Dangling meta character '*' near index 3"],
    ['^a{', 'Illegal repetition near index 3'],
    ['^\\i', 'Illegal/unsupported escape sequence near index 2'],
    ['^\\', 'Unescaped trailing backslash near index 2'],
    ['^)', "Unmatched closing ')' near index 0"],
    ['^[z-a]', 'Illegal character range near index 4'],
    ['^\\k<x>', 'named capturing group <x> does not exist near index 5'],
    ['^(?<a>x)(?<a>y)', 'Named capturing group <a> is already defined near index 12'],
    ['^\\p{Nope}', 'Unknown character property name {Nope} near index 8'],
    ['^(?q)', 'Unknown inline modifier near index 3'],
    ['^(?<=(?:a|bc){2})x', 'Look-behind group does not have an obvious maximum length near index 15'],
  ])('%s', (pattern, reason) => {
    expect(compileJavaRegex(pattern)).toEqual({ kind: 'invalid', message: `invalid regular expression ${JSON.stringify(pattern)}: ${reason}` });
  });
});

describe('compileJavaRegex refuses what Java accepts but refrelay cannot match alike', () => {
  it.each([
    ['^(a)\\1', 'the backreference \\1 cannot be matched exactly as Java does'],
    ['^\\p{InGreek}', '\\p{InGreek} (a Unicode block) has no equivalent here'],
    ['^\\p{javaLowerCase}', '\\p{javaLowerCase} (a java.lang.Character method) has no exact equivalent'],
    ['^\\X', '\\X (a grapheme cluster) has no equivalent here'],
    ['^\\b{g}', '\\b{g} (a grapheme cluster boundary) has no equivalent here'],
    ['^\\N{LATIN SMALL LETTER A}', '\\N{…} (a character by name) has no equivalent here'],
    ['^(?U)\\w', '(?U) (Unicode \\w, \\d, \\s and POSIX classes) has no exact equivalent here'],
    ['^(?iu)\u00e9', '(?iu) (Unicode case folding) has no exact equivalent here'],
    ['^(?c)a', '(?c) (canonical equivalence) has no equivalent here'],
    ['^(?<=a+)b', 'a look-behind without a maximum length'],
    ['^(?<=(?>a))b', 'an atomic group or possessive quantifier inside a look-behind has no exact equivalent here'],
  ])('%s', (pattern, reason) => {
    const result = compileJavaRegex(pattern);
    expect(isJavaRegexProblem(result) && result.kind).toBe('untranslatable');
    expect(isJavaRegexProblem(result) && result.message).toContain(`regular expression ${JSON.stringify(pattern)}: ${reason}`);
  });
});
