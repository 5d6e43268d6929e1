import { FLAG, hexValue, isAsciiAlpha, isHexDigit, UntranslatableError, type PatternReader } from './java-regex-reader.js';
import { predefinedClass, type CharSet } from './java-regex-sets.js';

/** A translated piece of pattern with Java's length bookkeeping (for look-behind limits). */
export interface Piece {
  readonly js: string;
  readonly min: number;
  /** Infinity when Java finds no maximum. */
  readonly max: number;
  /** Java's "deterministic": no alternation or variable repetition inside. */
  readonly det: boolean;
  /** False when Java itself finds no maximum (a repeated group of varying length, Java's `Loop`). */
  readonly javaMax?: false;
}

export const assertion = (js: string): Piece => ({ js, min: 0, max: 0, det: true });

/** What a backslash sequence stands for: one code point, a class, or a zero-width or multi-character node. */
export type Escaped = number | { readonly set: CharSet } | { readonly node: Piece };

const LINE_END = '[\\u{a}\\u{d}\\u{85}\\u{2028}\\u{2029}]';
const NOT_LF_LINE_END = '[\\u{d}\\u{85}\\u{2028}\\u{2029}]';
const ANY = '[\\u{0}-\\u{10ffff}]';

/** `^` as Java means it: input start; with `(?m)` also after a line end, but never at the very end. */
export function caret(reader: PatternReader): Piece {
  if (!reader.has(FLAG.multiline)) return assertion('^');
  if (reader.has(FLAG.unixLines)) return assertion(`(?=${ANY})(?:^|(?<=\\u{a}))`);
  return assertion(`(?=${ANY})(?:^|(?<=[\\u{a}\\u{85}\\u{2028}\\u{2029}])|(?<=\\u{d})(?!\\u{a}))`);
}

/** `$` (and `\Z` without multiline): input end, or before a final line end; never between CR and LF. */
export function dollar(reader: PatternReader, multiline: boolean): Piece {
  if (reader.has(FLAG.unixLines)) return assertion(multiline ? '(?:$|(?=\\u{a}))' : '(?=\\u{a}?$)');
  if (multiline) return assertion(`(?:$|(?=${NOT_LF_LINE_END})|(?<!\\u{d})(?=\\u{a}))`);
  return assertion(`(?:$|(?=\\u{d}\\u{a}$)|(?=${NOT_LF_LINE_END}$)|(?<!\\u{d})(?=\\u{a}$))`);
}

/** `.`: any character but a line end, unless `(?s)`; `(?d)` makes only LF a line end. */
export function dot(reader: PatternReader): Piece {
  if (reader.has(FLAG.dotAll)) return { js: ANY, min: 1, max: 1, det: true };
  const js = reader.has(FLAG.unixLines) ? '[^\\u{a}]' : `[^${LINE_END}]`;
  return { js, min: 1, max: 1, det: true };
}

/**
 * `\b` of Java 19 and later: ASCII word characters, plus non-spacing marks that follow a
 * letter or digit (Java's `hasBaseCharacter`).
 */
function wordBoundary(boundary: boolean): Piece {
  const before = '(?:(?<=[A-Za-z0-9_])|(?<=[\\p{L}\\p{Nd}]\\p{Mn}+))';
  const after = '(?:(?=[A-Za-z0-9_])|(?<=[\\p{L}\\p{Nd}]\\p{Mn}*)(?=\\p{Mn}))';
  return assertion(boundary ? `(?:${before}(?!${after})|(?!${before})${after})` : `(?:${before}${after}|(?!${before})(?!${after}))`);
}

/** Escapes that stand for one control character, in a class or out of one. */
const CONTROL_CHARACTERS: Readonly<Record<string, number>> = { a: 0x07, e: 0x1b, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

const isBackreferenceDigit = (ch: number): boolean => ch >= 0x31 && ch <= 0x39;

/**
 * Java's `escape()`: reads `\x…` at the cursor (which is on the backslash). `isRange` is Java's
 * compatibility rule that `\v` before or after `-` in a class is the single character VT.
 */
export function escape(reader: PatternReader, inClass: boolean, isRange: boolean, groupNames: ReadonlySet<string>): Escaped {
  const ch = reader.skip();
  const letter = String.fromCodePoint(ch);
  const set = predefinedClass(letter);
  if (set !== undefined && !(letter === 'v' && isRange)) return { set };
  const control = CONTROL_CHARACTERS[letter];
  if (control !== undefined) return control;
  switch (letter) {
    case '0':
      return octal(reader);
    case 'c':
      return controlOf(reader);
    case 'u':
      return unicode(reader);
    case 'x':
      return hex(reader);
    case 'N':
      throw new UntranslatableError('\\N{…} (a character by name) has no equivalent here; write the character or \\x{…}');
  }
  if (!inClass) {
    const node = nodeEscape(reader, letter, groupNames);
    if (node !== undefined) return { node };
  }
  // Java reserves every other ASCII letter and digit; any other character stands for itself.
  if (!isAsciiAlpha(ch) && !isBackreferenceDigit(ch)) return ch;
  throw reader.error('Illegal/unsupported escape sequence');
}

/** The escapes that are zero-width or several characters, allowed outside a class only. */
function nodeEscape(reader: PatternReader, letter: string, groupNames: ReadonlySet<string>): Piece | undefined {
  switch (letter) {
    case 'A':
      return assertion('^');
    case 'z':
      return assertion('$');
    case 'Z':
      return dollar(reader, false);
    case 'G':
      // String.matches starts at 0, where Java's "end of the previous match" also is.
      return assertion('^');
    case 'b':
      if (reader.peek() === 0x7b) {
        if (reader.skip() === 0x67) {
          if (reader.read() === 0x7d) throw new UntranslatableError('\\b{g} (a grapheme cluster boundary) has no equivalent here');
          return undefined;
        }
        reader.unread();
        reader.unread();
      }
      return wordBoundary(true);
    case 'B':
      return wordBoundary(false);
    case 'R':
      return { js: '(?:\\u{d}\\u{a}|[\\u{a}-\\u{d}\\u{85}\\u{2028}\\u{2029}])', min: 1, max: 2, det: true };
    case 'X':
      throw new UntranslatableError('\\X (a grapheme cluster) has no equivalent here');
    case 'k':
      namedReference(reader, groupNames);
      throw new UntranslatableError('the backreference \\k<…> cannot be matched exactly as Java does; rewrite the pattern without it');
  }
  if (letter.length === 1 && isBackreferenceDigit(letter.codePointAt(0)!)) {
    throw new UntranslatableError(
      `the backreference \\${letter} cannot be matched exactly as Java does (Java fails it when the group did not take part); rewrite the pattern without it`,
    );
  }
  return undefined;
}

function namedReference(reader: PatternReader, groupNames: ReadonlySet<string>): void {
  if (reader.read() !== 0x3c) throw reader.error("\\k is not followed by '<' for named capturing group");
  const name = groupName(reader, reader.read());
  if (!groupNames.has(name)) throw reader.error(`named capturing group <${name}> does not exist`);
}

/** Reads a group name after `<` (its first character already read) and the closing `>`. */
export function groupName(reader: PatternReader, first: number): string {
  if (!isAsciiAlpha(first)) throw reader.error('capturing group name does not start with a Latin letter');
  let name = '';
  let ch = first;
  do {
    name += String.fromCodePoint(ch);
    ch = reader.read();
  } while (isAsciiAlpha(ch) || (ch >= 0x30 && ch <= 0x39));
  if (ch !== 0x3e) throw reader.error("named capturing group is missing trailing '>'");
  return name;
}

function controlOf(reader: PatternReader): number {
  if (reader.cursor < reader.length) return reader.read() ^ 64;
  throw reader.error('Illegal control escape sequence');
}

const isOctal = (ch: number): boolean => ch >= 0x30 && ch <= 0x37;

function octal(reader: PatternReader): number {
  const n = reader.read();
  if (!isOctal(n)) throw reader.error('Illegal octal escape sequence');
  const m = reader.read();
  if (!isOctal(m)) {
    reader.unread();
    return n - 0x30;
  }
  const o = reader.read();
  if (isOctal(o) && n <= 0x33) return (n - 0x30) * 64 + (m - 0x30) * 8 + (o - 0x30);
  reader.unread();
  return (n - 0x30) * 8 + (m - 0x30);
}

function hex(reader: PatternReader): number {
  const n = reader.read();
  if (isHexDigit(n)) {
    const m = reader.read();
    if (isHexDigit(m)) return hexValue(n) * 16 + hexValue(m);
  } else if (n === 0x7b && isHexDigit(reader.peek())) {
    let value = 0;
    let ch = reader.read();
    while (isHexDigit(ch)) {
      value = value * 16 + hexValue(ch);
      if (value > 0x10ffff) throw reader.error('Hexadecimal codepoint is too big');
      ch = reader.read();
    }
    if (ch !== 0x7d) throw reader.error('Unclosed hexadecimal escape sequence');
    return value;
  }
  throw reader.error('Illegal hexadecimal escape sequence');
}

function fourHex(reader: PatternReader): number {
  let value = 0;
  for (let i = 0; i < 4; i++) {
    const ch = reader.read();
    if (!isHexDigit(ch)) throw reader.error('Illegal Unicode escape sequence');
    value = value * 16 + hexValue(ch);
  }
  return value;
}

/** `\uXXXX`; a high surrogate followed by `\uXXXX` of a low one is one code point, as in Java. */
function unicode(reader: PatternReader): number {
  const high = fourHex(reader);
  if (high >= 0xd800 && high <= 0xdbff) {
    const cursor = reader.cursor;
    if (reader.read() === 0x5c && reader.read() === 0x75) {
      const low = fourHex(reader);
      if (low >= 0xdc00 && low <= 0xdfff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
    }
    reader.cursor = cursor;
  }
  return high;
}
