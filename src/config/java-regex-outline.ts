/**
 * A coarse reading of a Java regular expression: its alternatives, and for each the elements it
 * consumes in order, with how often at least each must match and where its text ends. Enough to
 * tell what every match ends with (`prefix-pattern-hint.ts`), nothing more: classes, escapes
 * other than literal ones, and `.` are opaque. Anything it does not follow with certainty, such
 * as `(?x)` (comments mode changes what a space or `#` means) or a backreference, makes it give
 * up, so a caller never concludes from a misreading. Patterns reach it after `compileJavaRegex`
 * accepted them, so it need not report Java's syntax errors.
 */

export interface OutlineAlternative {
  /** Offsets in the pattern text: from the first character of the alternative to the end of its last element. */
  readonly start: number;
  readonly end: number;
  readonly elements: readonly OutlineElement[];
}

export type OutlineElement =
  | ({ readonly kind: 'char'; readonly char: string } & Extent)
  | ({ readonly kind: 'group'; readonly alternatives: readonly OutlineAlternative[] } & Extent)
  | ({ readonly kind: 'other' } & Extent)
  /** Consumes nothing: `^`, `$`, `\b`, look-arounds, a flags-only group such as `(?i)`. */
  | ({ readonly kind: 'zero' } & Extent);

interface Extent {
  /** Fewest repetitions its quantifier allows (1 without one). */
  readonly min: number;
  /** Whether a quantifier follows it. */
  readonly quantified: boolean;
  /** Offset just past the element and its quantifier; past `\E` for the last character of a quote. */
  readonly end: number;
  /** The character comes from a `\Q` quote that runs to the end of the pattern (text appended there stays quoted). */
  readonly openQuote?: boolean;
}

export interface Outline {
  readonly alternatives: readonly OutlineAlternative[];
  /** An inline flag group (`(?i)`, `(?s:…)`) occurs: a literal may match other spellings too. */
  readonly flags: boolean;
}

class GiveUp extends Error {}

/** The outline of `text`, or undefined when it uses something this reading does not follow. */
export function outlineJavaRegex(text: string): Outline | undefined {
  if (/\(\?[a-zA-Z-]*x/.test(text)) return undefined;
  const reader = new OutlineReader(text);
  try {
    const alternatives = reader.alternatives();
    if (reader.pos !== text.length) return undefined;
    return { alternatives, flags: reader.flags };
  } catch (error) {
    if (error instanceof GiveUp) return undefined;
    throw error;
  }
}

const ZERO_WIDTH_ESCAPES = new Set(['b', 'B', 'A', 'z', 'Z', 'G']);

class OutlineReader {
  pos = 0;
  flags = false;

  constructor(private readonly text: string) {}

  alternatives(): OutlineAlternative[] {
    const found: OutlineAlternative[] = [];
    for (;;) {
      const start = this.pos;
      const elements = this.sequence();
      found.push({ start, end: elements.at(-1)?.end ?? start, elements });
      if (this.text[this.pos] !== '|') return found;
      this.pos++;
    }
  }

  private sequence(): OutlineElement[] {
    const elements: OutlineElement[] = [];
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined || c === '|' || c === ')') return elements;
      if (this.text.startsWith('\\Q', this.pos)) {
        elements.push(...this.quote());
      } else {
        elements.push(this.element(c));
      }
      const last = elements.pop();
      if (last !== undefined) elements.push(this.quantifier(last));
    }
  }

  /** `\Q…\E`: every character literal; a quantifier after it repeats only the last one, as in Java. */
  private quote(): OutlineElement[] {
    const from = this.pos + 2;
    const close = this.text.indexOf('\\E', from);
    const to = close < 0 ? this.text.length : close;
    this.pos = close < 0 ? to : close + 2;
    const chars = Array.from(this.text.slice(from, to));
    return chars.map((char, i) => {
      const last = i === chars.length - 1;
      return { kind: 'char', char, min: 1, quantified: false, end: last ? this.pos : from, ...(last && close < 0 ? { openQuote: true } : {}) };
    });
  }

  private element(c: string): OutlineElement {
    const plain = { min: 1, quantified: false };
    if (c === '\\') return this.escape();
    if (c === '[') {
      this.skipClass();
      return { kind: 'other', ...plain, end: this.pos };
    }
    if (c === '(') return this.group();
    // Java reads `{` with nothing before it as an empty literal; too rare to follow.
    if (c === '{' || c === '?' || c === '*' || c === '+') throw new GiveUp();
    const char = String.fromCodePoint(this.text.codePointAt(this.pos) ?? 0);
    this.pos += char.length;
    if (c === '.') return { kind: 'other', ...plain, end: this.pos };
    if (c === '^' || c === '$') return { kind: 'zero', ...plain, end: this.pos };
    return { kind: 'char', char, ...plain, end: this.pos };
  }

  private escape(): OutlineElement {
    const c = this.text[this.pos + 1];
    if (c === undefined) throw new GiveUp();
    const plain = { min: 1, quantified: false };
    if (!/[A-Za-z0-9]/.test(c)) {
      this.pos += 2;
      return { kind: 'char', char: c, ...plain, end: this.pos };
    }
    this.skipEscape();
    return { kind: ZERO_WIDTH_ESCAPES.has(c) ? 'zero' : 'other', ...plain, end: this.pos };
  }

  /** Moves past one escape sequence that is not a literal punctuation character. */
  private skipEscape(): void {
    const c = this.text[this.pos + 1] ?? '';
    this.pos += 2;
    const braced = (open: string, close: string): void => {
      if (this.text[this.pos] !== open) return;
      const end = this.text.indexOf(close, this.pos);
      if (end < 0) throw new GiveUp();
      this.pos = end + 1;
    };
    if (c === 'p' || c === 'P') {
      if (this.text[this.pos] === '{') braced('{', '}');
      else this.pos += 1;
    } else if (c === 'x') {
      if (this.text[this.pos] === '{') braced('{', '}');
      else this.pos += 2;
    } else if (c === 'u') {
      this.pos += 4;
    } else if (c === '0') {
      let digits = 0;
      while (digits < 3 && /[0-7]/.test(this.text[this.pos] ?? '')) {
        this.pos++;
        digits++;
      }
    } else if (c === 'c') {
      this.pos += 1;
    } else if (c === 'k') {
      braced('<', '>');
    } else if (c === 'N' || c === 'b') {
      braced('{', '}');
    } else if (/[1-9E]/.test(c)) {
      // Backreferences (how many digits Java takes depends on the groups) and a stray `\E`.
      throw new GiveUp();
    }
    if (this.pos > this.text.length) throw new GiveUp();
  }

  /** Java's class syntax: a `]` right after `[` or `[^` is a member, `[` opens a nested class. */
  private skipClass(): void {
    this.pos++;
    if (this.text[this.pos] === '^') this.pos++;
    let first = true;
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) throw new GiveUp();
      if (c === ']' && !first) {
        this.pos++;
        return;
      }
      first = false;
      if (c === '[') {
        this.skipClass();
      } else if (this.text.startsWith('\\Q', this.pos)) {
        const close = this.text.indexOf('\\E', this.pos + 2);
        if (close < 0) throw new GiveUp();
        this.pos = close + 2;
      } else if (c === '\\') {
        if (!/[A-Za-z0-9]/.test(this.text[this.pos + 1] ?? '')) this.pos += 2;
        else this.skipEscape();
      } else {
        this.pos++;
      }
    }
  }

  private group(): OutlineElement {
    const plain = { min: 1, quantified: false };
    const head = /^\((?:\?(?::|=|!|<=|<!|>|<[a-zA-Z][a-zA-Z0-9]*>|([a-zA-Z-]*)(\)|:)))?/.exec(this.text.slice(this.pos));
    if (head === null) throw new GiveUp();
    const [opening, flags, flagsEnd] = head;
    this.pos += opening.length;
    if (flags !== undefined) this.flags = true;
    if (flagsEnd === ')') return { kind: 'zero', ...plain, end: this.pos };
    const alternatives = this.alternatives();
    if (this.text[this.pos] !== ')') throw new GiveUp();
    this.pos++;
    const lookaround = ['(?=', '(?!', '(?<=', '(?<!'].includes(opening);
    return lookaround ? { kind: 'zero', ...plain, end: this.pos } : { kind: 'group', alternatives, ...plain, end: this.pos };
  }

  /** `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}`, each optionally lazy (`?`) or possessive (`+`). */
  private quantifier(element: OutlineElement): OutlineElement {
    const match = /^(?:([?*+])|\{(\d+)(?:,\d*)?\})[?+]?/.exec(this.text.slice(this.pos));
    if (match === null) return element;
    this.pos += match[0].length;
    const min = match[1] === '+' ? 1 : match[1] !== undefined ? 0 : Number(match[2]);
    return { ...element, min: element.min * min, quantified: true, end: this.pos, openQuote: false };
  }
}
