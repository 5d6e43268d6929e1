import { UntranslatableError } from './java-regex-reader.js';

/**
 * Java character classes as JavaScript `v`-mode class expressions. A class is kept as a tree
 * until its `]`: Java adds later characters to a shared bit set that an earlier `&&` already
 * refers to, and only rendering at the end sees the same set Java matches.
 */
export type CharSet =
  | { readonly kind: 'bits'; readonly cps: Set<number> }
  | { readonly kind: 'js'; readonly js: string }
  | { readonly kind: 'union' | 'and'; readonly left: CharSet; readonly right: CharSet }
  | { readonly kind: 'not'; readonly inner: CharSet };

export const bits = (): CharSet & { kind: 'bits' } => ({ kind: 'bits', cps: new Set() });
export const js = (text: string): CharSet => ({ kind: 'js', js: text });
export const union = (left: CharSet, right: CharSet): CharSet => ({ kind: 'union', left, right });
export const and = (left: CharSet, right: CharSet): CharSet => ({ kind: 'and', left, right });
export const not = (inner: CharSet): CharSet => ({ kind: 'not', inner });

/** A class operand in `v` mode: `[…]`, `[^…]` or `\p{…}`. */
export function renderSet(set: CharSet): string {
  switch (set.kind) {
    case 'bits':
      return ranges([...set.cps].sort((a, b) => a - b).map((cp) => [cp, cp]));
    case 'js':
      return set.js;
    case 'union':
      return `[${renderSet(set.left)}${renderSet(set.right)}]`;
    case 'and':
      return `[${renderSet(set.left)}&&${renderSet(set.right)}]`;
    case 'not':
      return `[^${renderSet(set.inner)}]`;
  }
}

/** One code point as a `v`-mode escape that means the same inside and outside a class. */
export function cpText(cp: number): string {
  const isWordChar = (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
  return isWordChar ? String.fromCodePoint(cp) : `\\u{${cp.toString(16)}}`;
}

export function ranges(list: readonly (readonly [number, number])[]): string {
  return `[${list.map(([lo, hi]) => (lo === hi ? cpText(lo) : `${cpText(lo)}-${cpText(hi)}`)).join('')}]`;
}

export function isAsciiLetter(cp: number): boolean {
  return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);
}

/** Java's ASCII-only case folding (CASE_INSENSITIVE without UNICODE_CASE). */
export function otherCase(cp: number): number {
  if (cp >= 0x41 && cp <= 0x5a) return cp + 0x20;
  if (cp >= 0x61 && cp <= 0x7a) return cp - 0x20;
  return cp;
}

/** `lo-hi` under ASCII case folding: also every ASCII letter whose other case is in the range. */
export function caseInsensitiveRange(lo: number, hi: number): CharSet {
  const extra: [number, number][] = [];
  for (let cp = 0x41; cp <= 0x7a; cp++) {
    if (!isAsciiLetter(cp) || (cp >= lo && cp <= hi)) continue;
    const other = otherCase(cp);
    if (other >= lo && other <= hi) extra.push([cp, cp]);
  }
  return js(ranges([[lo, hi], ...extra]));
}

const ASCII_SPACE: [number, number][] = [
  [0x09, 0x0d],
  [0x20, 0x20],
];
const HORIZONTAL_SPACE: [number, number][] = [
  [0x09, 0x09],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x180e, 0x180e],
  [0x2000, 0x200a],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
];
const VERTICAL_SPACE: [number, number][] = [
  [0x0a, 0x0d],
  [0x85, 0x85],
  [0x2028, 0x2029],
];

/** `\d \w \s \h \v` and their complements, as Java means them without `(?U)`: ASCII only, except `\h \v`. */
export function predefinedClass(letter: string): CharSet | undefined {
  const lower = letter.toLowerCase();
  const list: [number, number][] | undefined = {
    d: [[0x30, 0x39]] as [number, number][],
    w: [
      [0x30, 0x39],
      [0x41, 0x5a],
      [0x5f, 0x5f],
      [0x61, 0x7a],
    ] as [number, number][],
    s: ASCII_SPACE,
    h: HORIZONTAL_SPACE,
    v: VERTICAL_SPACE,
  }[lower];
  if (list === undefined) return undefined;
  const set = js(ranges(list));
  return letter === lower ? set : not(set);
}

/** POSIX names with their ASCII meaning (`\p{Alpha}`, also `\p{gc=Alpha}` in Java). */
const ASCII_POSIX: Readonly<Record<string, [number, number][]>> = {
  ASCII: [[0x00, 0x7f]],
  Alnum: [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Alpha: [
    [0x41, 0x5a],
    [0x61, 0x7a],
  ],
  Blank: [
    [0x09, 0x09],
    [0x20, 0x20],
  ],
  Cntrl: [
    [0x00, 0x1f],
    [0x7f, 0x7f],
  ],
  Digit: [[0x30, 0x39]],
  Graph: [[0x21, 0x7e]],
  Lower: [[0x61, 0x7a]],
  Print: [[0x20, 0x7e]],
  Punct: [
    [0x21, 0x2f],
    [0x3a, 0x40],
    [0x5b, 0x60],
    [0x7b, 0x7e],
  ],
  Space: ASCII_SPACE,
  Upper: [[0x41, 0x5a]],
  XDigit: [
    [0x30, 0x39],
    [0x41, 0x46],
    [0x61, 0x66],
  ],
  L1: [[0x00, 0xff]],
  all: [[0x00, 0x10ffff]],
};

const GENERAL_CATEGORIES = new Set([
  'Cn',
  'Lu',
  'Ll',
  'Lt',
  'Lm',
  'Lo',
  'Mn',
  'Me',
  'Mc',
  'Nd',
  'Nl',
  'No',
  'Zs',
  'Zl',
  'Zp',
  'Cc',
  'Cf',
  'Co',
  'Cs',
  'Pd',
  'Ps',
  'Pe',
  'Pc',
  'Po',
  'Sm',
  'Sc',
  'Sk',
  'So',
  'Pi',
  'Pf',
  'L',
  'M',
  'N',
  'Z',
  'C',
  'P',
  'S',
  'LC',
]);

const CASED = '[\\p{Lowercase}\\p{Uppercase}\\p{Lt}]';
const WHITE_SPACE = '[\\p{Zs}\\p{Zl}\\p{Zp}\\u{9}-\\u{d}\\u{85}]';
const GRAPH = '[^\\p{Zs}\\p{Zl}\\p{Zp}\\p{Cc}\\p{Cs}\\p{Cn}]';
const BLANK = '[\\p{Zs}\\u{9}]';

/** Java's `forProperty`: general categories, POSIX (ASCII) names, `java…` methods. */
function forProperty(name: string, caseInsensitive: boolean): CharSet | undefined {
  if ((name === 'Lu' || name === 'Ll' || name === 'Lt') && caseInsensitive) return js('\\p{LC}');
  if (GENERAL_CATEGORIES.has(name)) return js(`\\p{${name}}`);
  if (name === 'LD') return js('[\\p{L}\\p{Nd}]');
  if ((name === 'Lower' || name === 'Upper') && caseInsensitive) return js(ranges(ASCII_POSIX.Alpha ?? []));
  const posix = ASCII_POSIX[name];
  if (posix !== undefined) return js(ranges(posix));
  if (name.startsWith('java') && JAVA_METHODS.has(name)) {
    throw new UntranslatableError(
      `\\p{${name}} (a java.lang.Character method) has no exact equivalent; use a Unicode property such as \\p{IsAlphabetic} or \\p{L}`,
    );
  }
  return undefined;
}

const JAVA_METHODS = new Set([
  'javaLowerCase',
  'javaUpperCase',
  'javaAlphabetic',
  'javaIdeographic',
  'javaTitleCase',
  'javaDigit',
  'javaDefined',
  'javaLetter',
  'javaLetterOrDigit',
  'javaJavaIdentifierStart',
  'javaJavaIdentifierPart',
  'javaUnicodeIdentifierStart',
  'javaUnicodeIdentifierPart',
  'javaIdentifierIgnorable',
  'javaSpaceChar',
  'javaWhitespace',
  'javaISOControl',
  'javaMirrored',
]);

/** Java's `forUnicodeProperty` (binary properties and Unicode POSIX names, any case), after `Is`. */
function forUnicodeProperty(rawName: string, caseInsensitive: boolean): CharSet | undefined {
  const name = rawName.toUpperCase();
  const cased = caseInsensitive ? CASED : undefined;
  const table: Readonly<Record<string, string>> = {
    ALPHABETIC: '\\p{Alphabetic}',
    ALPHA: '\\p{Alphabetic}',
    ASSIGNED: '\\P{Cn}',
    CONTROL: '\\p{Cc}',
    CNTRL: '\\p{Cc}',
    EMOJI: '\\p{Emoji}',
    EMOJI_PRESENTATION: '\\p{Emoji_Presentation}',
    EMOJI_MODIFIER: '\\p{Emoji_Modifier}',
    EMOJI_MODIFIER_BASE: '\\p{Emoji_Modifier_Base}',
    EMOJI_COMPONENT: '\\p{Emoji_Component}',
    EXTENDED_PICTOGRAPHIC: '\\p{Extended_Pictographic}',
    HEXDIGIT: '[\\p{Nd}\\p{Hex_Digit}]',
    HEX_DIGIT: '[\\p{Nd}\\p{Hex_Digit}]',
    XDIGIT: '[\\p{Nd}\\p{Hex_Digit}]',
    IDEOGRAPHIC: '\\p{Ideographic}',
    JOINCONTROL: '\\p{Join_Control}',
    JOIN_CONTROL: '\\p{Join_Control}',
    LETTER: '\\p{L}',
    LOWERCASE: cased ?? '\\p{Lowercase}',
    LOWER: cased ?? '\\p{Lowercase}',
    UPPERCASE: cased ?? '\\p{Uppercase}',
    UPPER: cased ?? '\\p{Uppercase}',
    TITLECASE: cased ?? '\\p{Lt}',
    NONCHARACTERCODEPOINT: '\\p{Noncharacter_Code_Point}',
    NONCHARACTER_CODE_POINT: '\\p{Noncharacter_Code_Point}',
    PUNCTUATION: '\\p{P}',
    PUNCT: '\\p{P}',
    WHITESPACE: WHITE_SPACE,
    WHITE_SPACE: WHITE_SPACE,
    SPACE: WHITE_SPACE,
    WORD: '[\\p{Alphabetic}\\p{Mn}\\p{Me}\\p{Mc}\\p{Nd}\\p{Pc}\\p{Join_Control}]',
    ALNUM: '[\\p{Alphabetic}\\p{Nd}]',
    DIGIT: '\\p{Nd}',
    BLANK,
    GRAPH,
    PRINT: `[[${GRAPH}${BLANK}]&&\\P{Cc}]`,
  };
  const text = table[name];
  return text === undefined ? undefined : js(text);
}

/** Java's `UnicodeScript.forName`: enum names and ISO 15924 codes, any case. */
function forScript(name: string): CharSet | undefined {
  const titled = name
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
    .join('_');
  for (const candidate of [titled, SCRIPT_SPELLINGS[titled.toLowerCase()]]) {
    if (candidate === undefined || !/^[A-Za-z_]+$/.test(candidate)) continue;
    const text = `\\p{Script=${candidate}}`;
    try {
      new RegExp(text, 'v');
      return js(text);
    } catch {
      // not a script name JavaScript knows under this spelling
    }
  }
  return undefined;
}

/** Script names whose Unicode spelling is not simply Title_Case. */
const SCRIPT_SPELLINGS: Readonly<Record<string, string>> = { signwriting: 'SignWriting' };

/**
 * Resolves `\p{name}` as Java's `family()` does. Returns undefined where Java says
 * "Unknown character property name"; throws UntranslatableError for what Java knows and
 * JavaScript does not (Unicode blocks, `java…` methods).
 */
export function property(name: string, caseInsensitive: boolean): CharSet | undefined {
  const eq = name.indexOf('=');
  if (eq >= 0) {
    const key = name.slice(0, eq).toLowerCase();
    const value = name.slice(eq + 1);
    if (key === 'sc' || key === 'script') return forScript(value);
    if (key === 'gc' || key === 'general_category') return forProperty(value, caseInsensitive);
    if (key === 'blk' || key === 'block') throw blockRefused(name);
    return undefined;
  }
  if (name.startsWith('In')) throw blockRefused(name);
  if (name.startsWith('Is')) {
    const short = name.slice(2);
    return forUnicodeProperty(short, caseInsensitive) ?? forProperty(short, caseInsensitive) ?? forScript(short);
  }
  return forProperty(name, caseInsensitive);
}

function blockRefused(name: string): UntranslatableError {
  return new UntranslatableError(`\\p{${name}} (a Unicode block) has no equivalent here; write the block's code point range, e.g. [\\x{0370}-\\x{03FF}]`);
}
