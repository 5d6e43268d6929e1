import { parseClass, propertyEscape } from './java-regex-class.js';
import { assertion, caret, dollar, dot, escape, groupName, type Piece } from './java-regex-escape.js';
import { FLAG, isAsciiDigit, PatternReader, readInlineFlags, UntranslatableError } from './java-regex-reader.js';
import { cpText, isAsciiLetter, otherCase, renderSet, type CharSet } from './java-regex-sets.js';

/** Java's repetition limit; a larger count does not compile. */
const MAX_REPS = 0x7fffffff;

const charPiece = (js: string): Piece => ({ js, min: 1, max: 1, det: true });
const EMPTY: Piece = { js: '', min: 0, max: 0, det: true };

/**
 * Translates a java.util.regex.Pattern into the source of an equivalent JavaScript `v`-mode
 * RegExp, by following Java's own recursive-descent parser (`Pattern.expr`, `sequence`,
 * `group0`, `closure`). Throws JavaSyntaxError where Java throws PatternSyntaxException and
 * UntranslatableError for what Java accepts but JavaScript cannot match the same way.
 */
export function translateJavaRegex(pattern: string): string {
  return new Translator(pattern).translate();
}

class Translator {
  private readonly reader: PatternReader;
  private readonly groupNames = new Set<string>();
  private lookbehindDepth = 0;
  private atomicCount = 0;

  constructor(pattern: string) {
    this.reader = new PatternReader(pattern);
  }

  translate(): string {
    const r = this.reader;
    const piece = this.expr();
    if (r.cursor !== r.length) {
      if (r.peek() === 0x29) throw r.error("Unmatched closing ')'");
      if (r.cursor === r.length + 1 && r.at(r.length - 1) === 0x5c) throw r.error('Unescaped trailing backslash');
      throw r.error('Unexpected internal error');
    }
    return piece.js;
  }

  private expr(): Piece {
    const branches: Piece[] = [];
    for (;;) {
      branches.push(this.sequence());
      if (this.reader.peek() !== 0x7c) break;
      this.reader.next();
    }
    if (branches.length === 1) return branches[0] ?? EMPTY;
    return {
      js: branches.map((b) => b.js).join('|'),
      min: Math.min(...branches.map((b) => b.min)),
      max: Math.max(...branches.map((b) => b.max)),
      det: false,
      ...javaMaxOf(branches),
    };
  }

  private sequence(): Piece {
    const r = this.reader;
    const pieces: Piece[] = [];
    for (;;) {
      const ch = r.peek();
      if (ch === 0x28) {
        // A group reads its own quantifier; a flags-only group `(?i)` adds nothing.
        const group = this.group();
        if (group !== undefined) pieces.push(group);
        continue;
      }
      if (ch === 0x7c || ch === 0x29 || (ch === 0 && r.cursor >= r.length)) break;
      if (ch === 0x3f || ch === 0x2a || ch === 0x2b) {
        r.next();
        throw r.error(`Dangling meta character '${String.fromCodePoint(ch)}'`);
      }
      pieces.push(this.closure(this.atom(ch), false));
    }
    return {
      js: pieces.map((p) => p.js).join(''),
      min: pieces.reduce((sum, p) => sum + p.min, 0),
      max: pieces.reduce((sum, p) => sum + p.max, 0),
      det: pieces.every((p) => p.det),
      ...javaMaxOf(pieces),
    };
  }

  /** One element of a sequence, before its quantifier. */
  private atom(ch: number): Piece {
    const r = this.reader;
    switch (ch) {
      case 0x5b:
        return this.classPiece(parseClass(r, true, this.groupNames));
      case 0x5c: {
        const next = r.nextEscaped();
        if (next === 0x70 || next === 0x50) return this.classPiece(propertyEscape(r, next === 0x50));
        r.unread();
        const escaped = escape(r, false, false, this.groupNames);
        if (typeof escaped === 'number') return this.literal(escaped);
        return 'set' in escaped ? this.classPiece(escaped.set) : escaped.node;
      }
      case 0x5e:
        r.next();
        return caret(r);
      case 0x24:
        r.next();
        return dollar(r, r.has(FLAG.multiline));
      case 0x2e:
        r.next();
        return dot(r);
      case 0x7b:
        // Java reads an empty literal here, which the quantifier that must follow repeats.
        return EMPTY;
      default:
        r.next();
        return this.literal(ch);
    }
  }

  private classPiece(set: CharSet): Piece {
    return charPiece(renderSet(set));
  }

  private literal(cp: number): Piece {
    if (this.reader.has(FLAG.caseInsensitive) && isAsciiLetter(cp)) return charPiece(`[${cpText(cp)}${cpText(otherCase(cp))}]`);
    return charPiece(cpText(cp));
  }

  /** Java's `group0()`; undefined for a flags-only group such as `(?i)`. */
  private group(): Piece | undefined {
    const r = this.reader;
    const savedFlags = r.flags;
    let ch = r.next();
    let piece: Piece;
    if (ch !== 0x3f) {
      piece = this.wrap('(?:', this.expr());
    } else {
      ch = r.skip();
      switch (ch) {
        case 0x3a:
          piece = this.wrap('(?:', this.expr());
          break;
        case 0x3d:
        case 0x21:
          piece = assertion(`${ch === 0x3d ? '(?=' : '(?!'}${this.expr().js})`);
          break;
        case 0x3e:
          piece = this.atomic(this.expr());
          break;
        case 0x3c:
          piece = this.lookbehindOrNamed();
          break;
        case 0x24:
        case 0x40:
          throw r.error('Unknown group type');
        default: {
          r.unread();
          readInlineFlags(r);
          ch = r.read();
          if (ch === 0x29) return undefined;
          if (ch !== 0x3a) throw r.error('Unknown inline modifier');
          piece = this.wrap('(?:', this.expr());
        }
      }
    }
    r.accept(0x29, 'Unclosed group');
    r.flags = savedFlags;
    return this.closure(piece, true);
  }

  private lookbehindOrNamed(): Piece {
    const r = this.reader;
    const ch = r.read();
    if (ch !== 0x3d && ch !== 0x21) {
      const name = groupName(r, ch);
      if (this.groupNames.has(name)) throw r.error(`Named capturing group <${name}> is already defined`);
      this.groupNames.add(name);
      return this.wrap('(?:', this.expr());
    }
    this.lookbehindDepth++;
    const body = this.expr();
    this.lookbehindDepth--;
    if (body.javaMax === false) throw r.error('Look-behind group does not have an obvious maximum length');
    if (body.max === Infinity) {
      throw new UntranslatableError(
        'a look-behind without a maximum length: Java refuses it or mis-matches it, depending on its version; bound the repetition, e.g. {0,100} instead of *',
      );
    }
    return assertion(`${ch === 0x3d ? '(?<=' : '(?<!'}${body.js})`);
  }

  private wrap(open: string, body: Piece): Piece {
    return { ...body, js: `${open}${body.js})` };
  }

  /**
   * An atomic group `(?>X)` (and a possessive quantifier, which is one): JavaScript has
   * neither, but a look-ahead that captures, followed by a backreference to that capture,
   * takes X's first match and never backtracks into it.
   */
  private atomic(body: Piece): Piece {
    if (this.lookbehindDepth > 0) {
      throw new UntranslatableError('an atomic group or possessive quantifier inside a look-behind has no exact equivalent here; use a greedy one');
    }
    const name = `a${++this.atomicCount}`;
    return { ...body, js: `(?=(?<${name}>${body.js}))\\k<${name}>` };
  }

  /** Java's `closure()`: the quantifier after a piece, if any. */
  private closure(piece: Piece, isGroup: boolean): Piece {
    const r = this.reader;
    const ch = r.peek();
    if (ch === 0x3f) return this.quantify(piece, 0, 1, '?', isGroup);
    if (ch === 0x2a) return this.quantify(piece, 0, Infinity, '*', isGroup);
    if (ch === 0x2b) return this.quantify(piece, 1, Infinity, '+', isGroup);
    if (ch !== 0x7b) return piece;
    let digit = r.skip();
    if (!isAsciiDigit(digit)) throw r.error('Illegal repetition');
    let min = 0;
    do {
      min = min * 10 + digit - 0x30;
      digit = r.read();
    } while (isAsciiDigit(digit));
    let max = min;
    let open = false;
    if (digit === 0x2c) {
      digit = r.read();
      if (digit === 0x7d) {
        open = true;
      } else {
        max = 0;
        while (isAsciiDigit(digit)) {
          max = max * 10 + digit - 0x30;
          digit = r.read();
        }
      }
    }
    if (min > MAX_REPS || max > MAX_REPS) throw r.error('Illegal repetition range');
    if (digit !== 0x7d) throw r.error('Unclosed counted closure');
    if (!open && max < min) throw r.error('Illegal repetition range');
    r.unread();
    const text = open ? `{${min},}` : min === max ? `{${min}}` : `{${min},${max}}`;
    return this.quantify(piece, min, open ? Infinity : max, text, isGroup);
  }

  private quantify(piece: Piece, min: number, max: number, text: string, isGroup: boolean): Piece {
    const r = this.reader;
    const next = r.next();
    let kind: 'greedy' | 'lazy' | 'possessive' = 'greedy';
    if (next === 0x3f) kind = 'lazy';
    if (next === 0x2b) kind = 'possessive';
    if (kind !== 'greedy') r.next();
    // Java repeats a group possessively by taking each repetition's first match.
    const body = kind === 'possessive' && isGroup ? this.atomic(piece).js : piece.js;
    const js = `(?:${body})${text}${kind === 'lazy' ? '?' : ''}`;
    // Java repeats a group that can match different lengths in a `Loop`, which has no maximum.
    const loop = isGroup && kind !== 'possessive' && !(min === 0 && max === 1) && !piece.det;
    const repeated: Piece = {
      js,
      min: piece.min * min,
      max: loop || max === Infinity || piece.max === Infinity ? Infinity : piece.max * max,
      det: piece.det && min === max && max !== Infinity,
      ...(loop || piece.javaMax === false ? { javaMax: false as const } : {}),
    };
    return kind === 'possessive' ? this.atomic(repeated) : repeated;
  }
}

function javaMaxOf(pieces: readonly Piece[]): Pick<Piece, 'javaMax'> {
  return pieces.some((p) => p.javaMax === false) ? { javaMax: false } : {};
}
