/**
 * Reading a java.util.regex.Pattern the way Java reads it: code points, `\Q…\E` quoting
 * removed up front, whitespace and `#` comments skipped under `(?x)`, and Java's own cursor
 * moves (peek, read, next, skip, unread). The translator in `java-regex-translate.ts` mirrors
 * Java's parser on top of these moves, so a pattern is accepted or refused where Java
 * accepts or refuses it.
 */

/** Inline flags, by what they change. */
export const FLAG = { caseInsensitive: 1, multiline: 2, dotAll: 4, unixLines: 8, comments: 16, unicodeCase: 32, unicodeClass: 64, canonEq: 128 } as const;

/** Java would refuse the pattern (PatternSyntaxException); `index` is Java's. */
export class JavaSyntaxError extends Error {
  constructor(
    readonly description: string,
    readonly index: number,
  ) {
    super(`${description} near index ${index}`);
  }
}

/** Java accepts the pattern, but refrelay cannot match it exactly as Java does. */
export class UntranslatableError extends Error {}

const BACKSLASH = 0x5c;

export class PatternReader {
  /** Code points, ended by two zeros as in Java (a zero is also a legal pattern character). */
  private readonly cps: number[];
  readonly length: number;
  cursor = 0;
  flags = 0;

  constructor(pattern: string) {
    const cps = removeQuoting(Array.from(pattern, (c) => c.codePointAt(0) ?? 0));
    this.length = cps.length;
    this.cps = [...cps, 0, 0];
  }

  has(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  /** The code point at `index`, zero past the end. */
  at(index: number): number {
    return this.cps[index] ?? 0;
  }

  /** Java's `mark`: plants a sentinel at the end so a scan for it stops there. */
  mark(cp: number): void {
    this.cps[this.length] = cp;
  }

  peek(): number {
    const ch = this.at(this.cursor);
    return this.has(FLAG.comments) ? this.peekPastWhitespace(ch) : ch;
  }

  read(): number {
    const ch = this.at(this.cursor++);
    return this.has(FLAG.comments) ? this.parsePastWhitespace(ch) : ch;
  }

  next(): number {
    const ch = this.at(++this.cursor);
    return this.has(FLAG.comments) ? this.peekPastWhitespace(ch) : ch;
  }

  nextEscaped(): number {
    return this.at(++this.cursor);
  }

  /** The character after the next one; moves past both. */
  skip(): number {
    const ch = this.at(this.cursor + 1);
    this.cursor += 2;
    return ch;
  }

  unread(): void {
    this.cursor--;
  }

  accept(expected: number, description: string): void {
    let ch = this.at(this.cursor++);
    if (this.has(FLAG.comments)) ch = this.parsePastWhitespace(ch);
    if (ch !== expected) throw this.error(description);
  }

  error(description: string): JavaSyntaxError {
    return new JavaSyntaxError(description, this.cursor - 1);
  }

  text(from: number, to: number): string {
    return String.fromCodePoint(...this.cps.slice(from, to));
  }

  private isLineSeparator(ch: number): boolean {
    if (this.has(FLAG.unixLines)) return ch === 0x0a;
    return ch === 0x0a || ch === 0x0d || (ch | 1) === 0x2029 || ch === 0x85;
  }

  private peekPastWhitespace(first: number): number {
    let ch = first;
    while (isAsciiSpace(ch) || ch === 0x23) {
      while (isAsciiSpace(ch)) ch = this.at(++this.cursor);
      if (ch === 0x23) ch = this.peekPastLine();
    }
    return ch;
  }

  private parsePastWhitespace(first: number): number {
    let ch = first;
    while (isAsciiSpace(ch) || ch === 0x23) {
      while (isAsciiSpace(ch)) ch = this.at(this.cursor++);
      if (ch === 0x23) ch = this.parsePastLine();
    }
    return ch;
  }

  private parsePastLine(): number {
    let ch = this.at(this.cursor++);
    while (ch !== 0 && !this.isLineSeparator(ch)) ch = this.at(this.cursor++);
    if (ch === 0 && this.cursor > this.length) {
      this.cursor = this.length;
      ch = this.at(this.cursor++);
    }
    return ch;
  }

  private peekPastLine(): number {
    let ch = this.at(++this.cursor);
    while (ch !== 0 && !this.isLineSeparator(ch)) ch = this.at(++this.cursor);
    if (ch === 0 && this.cursor > this.length) {
      this.cursor = this.length;
      ch = this.at(this.cursor);
    }
    return ch;
  }
}

/** Java's `addFlag`/`subFlag`: the letters of `(?idmsuxU-idmsuxU…` at the cursor. */
export function readInlineFlags(r: PatternReader): void {
  const letters: Record<string, number> = {
    i: FLAG.caseInsensitive,
    m: FLAG.multiline,
    s: FLAG.dotAll,
    d: FLAG.unixLines,
    u: FLAG.unicodeCase,
    c: FLAG.canonEq,
    x: FLAG.comments,
    U: FLAG.unicodeClass | FLAG.unicodeCase,
  };
  let on = true;
  let ch = r.peek();
  for (;;) {
    const letter = String.fromCodePoint(ch);
    if (letter === '-' && on) {
      on = false;
    } else {
      const flag = letters[letter];
      if (flag === undefined) break;
      r.flags = on ? r.flags | flag : r.flags & ~flag;
    }
    ch = r.next();
  }
  refuseUnsupportedFlags(r.flags);
}

function refuseUnsupportedFlags(flags: number): void {
  if ((flags & FLAG.canonEq) !== 0) throw new UntranslatableError('(?c) (canonical equivalence) has no equivalent here');
  if ((flags & FLAG.unicodeClass) !== 0) {
    throw new UntranslatableError(
      '(?U) (Unicode \\w, \\d, \\s and POSIX classes) has no exact equivalent here; write the Unicode property, e.g. \\p{IsAlphabetic}',
    );
  }
  if ((flags & FLAG.unicodeCase) !== 0 && (flags & FLAG.caseInsensitive) !== 0) {
    throw new UntranslatableError('(?iu) (Unicode case folding) has no exact equivalent here; list both cases, e.g. [éÉ]');
  }
}

export function isAsciiSpace(ch: number): boolean {
  return ch === 0x20 || (ch >= 0x09 && ch <= 0x0d);
}

export function isAsciiDigit(ch: number): boolean {
  return ch >= 0x30 && ch <= 0x39;
}

export function isAsciiAlpha(ch: number): boolean {
  return (ch >= 0x41 && ch <= 0x5a) || (ch >= 0x61 && ch <= 0x7a);
}

export function isHexDigit(ch: number): boolean {
  return isAsciiDigit(ch) || (ch >= 0x41 && ch <= 0x46) || (ch >= 0x61 && ch <= 0x66);
}

export function hexValue(ch: number): number {
  return isAsciiDigit(ch) ? ch - 0x30 : (ch | 0x20) - 0x61 + 10;
}

/**
 * Java rewrites `\Q…\E` before parsing: inside the quote every ASCII character that is not a
 * letter gets a backslash (digits right after `\Q` become `\x3N`, so an escape before the quote
 * cannot swallow them), and letters and non-ASCII characters stay as they are. Doing the same
 * keeps quirks such as a quote inside a character class.
 */
function removeQuoting(cps: readonly number[]): number[] {
  let i = 0;
  while (i < cps.length - 1) {
    if (cps[i] !== BACKSLASH) i += 1;
    else if (cps[i + 1] !== 0x51) i += 2;
    else break;
  }
  if (i >= cps.length - 1) return [...cps];
  const out = cps.slice(0, i);
  i += 2;
  let inQuote = true;
  let beginQuote = true;
  while (i < cps.length) {
    const c = cps[i++] ?? 0;
    if (c > 0x7f || isAsciiAlpha(c)) {
      out.push(c);
    } else if (isAsciiDigit(c)) {
      if (beginQuote) out.push(BACKSLASH, 0x78, 0x33);
      out.push(c);
    } else if (c !== BACKSLASH) {
      if (inQuote) out.push(BACKSLASH);
      out.push(c);
    } else if (inQuote) {
      if (cps[i] === 0x45) {
        i++;
        inQuote = false;
      } else {
        out.push(BACKSLASH, BACKSLASH);
      }
    } else if (cps[i] === 0x51) {
      i++;
      inQuote = true;
      beginQuote = true;
      continue;
    } else {
      out.push(c);
      if (i !== cps.length) out.push(cps[i++] ?? 0);
    }
    beginQuote = false;
  }
  return out;
}
