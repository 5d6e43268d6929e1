import { escape } from './java-regex-escape.js';
import { FLAG, type PatternReader } from './java-regex-reader.js';
import { and, bits, caseInsensitiveRange, isAsciiLetter, js, not, otherCase, property, ranges, union, type CharSet } from './java-regex-sets.js';

type Bits = ReturnType<typeof bits>;

/**
 * Java's `clazz()`: a character class at the cursor (on its `[`, or just before the
 * right-hand side of `abc&&def`). Unions, `&&` intersections and a leading `^` keep Java's
 * precedence (JDK 9 and later: `^` negates the whole class).
 */
export function parseClass(reader: PatternReader, consume: boolean, groupNames: ReadonlySet<string>): CharSet {
  let prev: CharSet | undefined;
  let curr: CharSet | undefined;
  const shared = bits();
  let negated = false;
  let hasBits = false;
  let ch = reader.next();
  if (ch === 0x5e && reader.at(reader.cursor - 1) === 0x5b) {
    ch = reader.next();
    negated = true;
  }
  for (;;) {
    if (ch === 0x5b) {
      curr = parseClass(reader, true, groupNames);
      prev = prev === undefined ? curr : union(prev, curr);
      ch = reader.peek();
      continue;
    }
    if (ch === 0x26) {
      ch = reader.next();
      if (ch === 0x26) {
        const right = intersectionOperand(reader, groupNames);
        ch = reader.peek();
        if (hasBits) {
          // The bits so far bind tighter than `&&`.
          if (prev === undefined) prev = curr = shared;
          else prev = union(prev, shared);
          hasBits = false;
        }
        if (right !== undefined) curr = right;
        if (prev === undefined) {
          if (right === undefined) throw reader.error('Bad class syntax');
          prev = right;
        } else {
          if (curr === undefined) throw reader.error('Bad intersection syntax');
          prev = and(prev, curr);
        }
        continue;
      }
      // A single `&` is a literal.
      reader.unread();
    } else if (ch === 0 && reader.cursor >= reader.length) {
      throw reader.error('Unclosed character class');
    } else if (ch === 0x5d && (prev !== undefined || hasBits)) {
      if (consume) reader.next();
      const whole = prev === undefined ? shared : hasBits ? union(prev, shared) : prev;
      return negated ? not(whole) : whole;
    }
    curr = classItem(reader, shared, groupNames);
    if (curr === undefined) {
      hasBits = true;
    } else {
      prev = prev === undefined ? curr : union(prev, curr);
    }
    ch = reader.peek();
  }
}

/** The right-hand side of `&&` (the cursor on the second `&`), up to the class's `]` or the next `&`; undefined when empty. */
function intersectionOperand(reader: PatternReader, groupNames: ReadonlySet<string>): CharSet | undefined {
  let right: CharSet | undefined;
  let ch = reader.next();
  while (ch !== 0x5d && ch !== 0x26) {
    let operand: CharSet;
    if (ch === 0x5b) {
      operand = parseClass(reader, true, groupNames);
    } else {
      reader.unread();
      operand = parseClass(reader, false, groupNames);
    }
    right = right === undefined ? operand : union(right, operand);
    ch = reader.peek();
  }
  return right;
}

/** Java's `range()`: one character, range, escape or property; undefined when it went into `shared`. */
function classItem(reader: PatternReader, shared: Bits, groupNames: ReadonlySet<string>): CharSet | undefined {
  let ch = reader.peek();
  if (ch === 0x5c) {
    ch = reader.nextEscaped();
    if (ch === 0x70 || ch === 0x50) return propertyEscape(reader, ch === 0x50);
    const isRange = reader.at(reader.cursor + 1) === 0x2d;
    reader.unread();
    const escaped = escape(reader, true, isRange, groupNames);
    if (typeof escaped !== 'number') {
      if ('set' in escaped) return escaped.set;
      throw reader.error('Illegal/unsupported escape sequence');
    }
    ch = escaped;
  } else {
    reader.next();
  }
  if (reader.peek() === 0x2d) {
    const endRange = reader.at(reader.cursor + 1);
    if (endRange === 0x5b) return single(reader, shared, ch);
    if (endRange !== 0x5d) {
      reader.next();
      let m = reader.peek();
      if (m === 0x5c) {
        const escaped = escape(reader, true, true, groupNames);
        m = typeof escaped === 'number' ? escaped : -1;
      } else {
        reader.next();
      }
      if (m < ch) throw reader.error('Illegal character range');
      return reader.has(FLAG.caseInsensitive) ? caseInsensitiveRange(ch, m) : js(ranges([[ch, m]]));
    }
  }
  return single(reader, shared, ch);
}

/** Java's `bitsOrSingle()`: Latin-1 characters go into the shared bit set, others stand alone. */
function single(reader: PatternReader, shared: Bits, ch: number): CharSet | undefined {
  const caseInsensitive = reader.has(FLAG.caseInsensitive);
  if (ch < 256) {
    shared.cps.add(ch);
    if (caseInsensitive && isAsciiLetter(ch)) shared.cps.add(otherCase(ch));
    return undefined;
  }
  return js(ranges([[ch, ch]]));
}

/**
 * `\p{…}`, `\pL`, `\P…` with the cursor on the `p`/`P` (Java's `family()`, reached after it
 * consumed an optional `{`).
 */
export function propertyEscape(reader: PatternReader, complement: boolean): CharSet {
  let oneLetter = true;
  if (reader.next() !== 0x7b) reader.unread();
  else oneLetter = false;
  reader.next();
  let name: string;
  if (oneLetter) {
    name = String.fromCodePoint(reader.at(reader.cursor));
    reader.read();
  } else {
    const start = reader.cursor;
    reader.mark(0x7d);
    while (reader.read() !== 0x7d) {
      // scan to the closing brace (or the sentinel at the end)
    }
    reader.mark(0);
    const end = reader.cursor;
    if (end > reader.length) throw reader.error('Unclosed character family');
    if (start + 1 >= end) throw reader.error('Empty character family');
    name = reader.text(start, end - 1);
  }
  const set = property(name, reader.has(FLAG.caseInsensitive));
  if (set === undefined) {
    const eq = name.indexOf('=');
    if (eq < 0) throw reader.error(`Unknown character property name {${name}}`);
    throw reader.error(`Unknown Unicode property {name=<${name.slice(0, eq).toLowerCase()}>, value=<${name.slice(eq + 1)}>}`);
  }
  return complement ? not(set) : set;
}
