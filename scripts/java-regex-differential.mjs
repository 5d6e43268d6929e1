// Checks the Java regex translation (src/config/java-regex*.ts) against a real JDK: random
// patterns built from Java regex syntax, each run by java.util.regex and by the translation on
// the same inputs. Every pattern must be refused by both, or matched alike on every input, or
// refused by refrelay alone as untranslatable (counted, never silent). Not part of the test
// suite (it needs a JDK); run it after changing the translator:
//   npm run build && node scripts/java-regex-differential.mjs [--seed N] [--count N] [--java PATH]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argv, exit } from 'node:process';

const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const seedOption = Number(option('--seed', '1'));
const count = Number(option('--count', '3000'));
const java = option('--java', 'java');
const { compileJavaRegex, isJavaRegexProblem } = await import('../dist/config/java-regex.js');

// Reads "b64(pattern)\tb64(input)…" lines; answers "ERR\tb64(description)\tindex" or "OK\t0110…".
const ORACLE = `
import java.io.*; import java.util.*; import java.util.regex.*;
public class Oracle {
  public static void main(String[] a) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, "UTF-8"));
    Base64.Decoder d = Base64.getDecoder(); Base64.Encoder e = Base64.getEncoder();
    for (String line; (line = in.readLine()) != null;) {
      String[] p = line.split("\\t", -1);
      Pattern pattern;
      try { pattern = Pattern.compile(new String(d.decode(p[0]), "UTF-8")); }
      catch (PatternSyntaxException x) { out.println("ERR\\t" + e.encodeToString(x.getDescription().getBytes("UTF-8")) + "\\t" + x.getIndex()); continue; }
      StringBuilder sb = new StringBuilder("OK\\t");
      for (int i = 1; i < p.length; i++) sb.append(pattern.matcher(new String(d.decode(p[i]), "UTF-8")).matches() ? '1' : '0');
      out.println(sb);
    }
    out.flush();
  }
}`;

let seed = seedOption;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (list) => list[Math.floor(random() * list.length)];

const LITERALS = ['a', 'b', 'A', 'B', '/', '-', '_', '1', 'é', 'É', ' ', 'x', 'k', 'K', 'ſ', '\u212a', '&', '#'];
const ESCAPES = [
  '\\d',
  '\\D',
  '\\w',
  '\\W',
  '\\s',
  '\\S',
  '\\h',
  '\\H',
  '\\v',
  '\\V',
  '\\.',
  '\\/',
  '\\-',
  '\\t',
  '\\n',
  '\\r',
  '\\x41',
  '\\x{61}',
  '\\u0062',
  '\\0101',
  '\\07',
  '\\cA',
  '\\e',
  '\\a',
  '\\f',
  '\\\\',
  '\\b',
  '\\B',
  '\\A',
  '\\z',
  '\\Z',
  '\\G',
  '\\R',
  '\\pL',
  '\\p{Lu}',
  '\\p{IsLatin}',
  '\\p{Alpha}',
  '\\p{IsAlphabetic}',
  '\\P{Lower}',
  '\\p{Upper}',
  '\\p{Punct}',
  '\\p{L1}',
  '\\p{sc=Latin}',
  '\\p{gc=Ll}',
  '\\p{IsWhite_Space}',
  '\\p{XDigit}',
  '\\p{IsLowercase}',
  '\\p{Lt}',
  '\\p{LD}',
  '\\Qa.b\\E',
  '\\Q-\\E',
  '\\Q\\',
  '\\E',
  '\\q',
  '\\1',
  '\\k<n>',
  '\\p{InGreek}',
  '\\p{Nope}',
  '\\p',
  '\\x',
  '\\u12',
  '\\b{g}',
];
const CLASS_ITEMS = [
  'a',
  'b',
  'a-z',
  'A-Z',
  '0-9',
  '-',
  '^',
  '&',
  '&&',
  ']',
  '[',
  '\\d',
  '\\s',
  '\\w',
  '\\W',
  'é',
  'É',
  'k',
  '\\p{Lu}',
  '\\P{L}',
  '\\v',
  '\\v-x',
  'a-\\x{7a}',
  '/',
  '.',
  ' ',
  '#',
  'K-k',
  'Z-a',
  '\\Q-]\\E',
  '\\-',
  '\\]',
  '\\[',
];
const FLAGS = ['(?i)', '(?-i)', '(?x)', '(?m)', '(?s)', '(?d)', '(?u)', '(?im)', '(?i-s)'];
const QUANTIFIERS = ['*', '+', '?', '{2}', '{1,2}', '{0,}', '{,2}', '{3,1}', '{2', '*?', '+?', '??', '*+', '++', '?+', '{1,3}?', '{1,2}+', '**', '{'];
const GROUPS = ['(', '(?:', '(?=', '(?!', '(?<=', '(?<!', '(?>', '(?i:', '(?<n>', '(?-i:', '(?x:'];
const INPUT_CHARS = [
  'a',
  'b',
  'A',
  'B',
  '/',
  '-',
  '_',
  '1',
  'é',
  'É',
  ' ',
  '\n',
  '\r',
  'x',
  'k',
  'K',
  '\u212a',
  'ſ',
  '\u0301',
  '.',
  '\u0085',
  '\u2028',
  '\t',
  '&',
];

function characterClass(depth) {
  let text = pick(['[', '[', '[^']);
  const items = 1 + Math.floor(random() * 4);
  for (let i = 0; i < items; i++) text += depth < 2 && random() < 0.15 ? characterClass(depth + 1) : pick(CLASS_ITEMS);
  return random() > 0.05 ? `${text}]` : text;
}

function atom(depth) {
  const r = random();
  if (r < 0.35) return pick(LITERALS);
  if (r < 0.55) return pick(ESCAPES);
  if (r < 0.68) return characterClass(0);
  if (r < 0.72) return pick(['.', '^', '$', '|', ')', '(', '}', ']', '{']);
  if (r < 0.78) return pick(FLAGS);
  if (depth > 2) return pick(LITERALS);
  return pick(GROUPS) + sequence(depth + 1) + (random() > 0.05 ? ')' : '');
}

function sequence(depth) {
  let text = '';
  const atoms = Math.floor(random() * 4);
  for (let i = 0; i < atoms; i++) {
    text += atom(depth);
    if (random() < 0.3) text += pick(QUANTIFIERS);
    if (random() < 0.08) text += '|';
  }
  return text;
}

function inputsFor(pattern) {
  const inputs = ['', 'a', 'ab', 'A', 'a/b', 'a.b', 'a\n', 'a\r\n', '\n', 'aa', 'aaa'];
  // The pattern's own characters, recombined, make matches likely.
  const own = [...pattern].filter((c) => !'\\()[]{}*+?|^$'.includes(c));
  for (let i = 0; i < 40; i++) {
    let input = '';
    const length = Math.floor(random() * 6);
    for (let j = 0; j < length; j++) input += random() < 0.5 && own.length > 0 ? pick(own) : pick(INPUT_CHARS);
    inputs.push(input);
  }
  return inputs;
}

const cases = Array.from({ length: count }, () => {
  const pattern = random() < 0.1 ? `(?x)${sequence(0).replace(/a/g, 'a # note\n ')}` : sequence(0);
  return { pattern, inputs: inputsFor(pattern) };
});

const work = mkdtempSync(join(tmpdir(), 'java-regex-oracle-'));
let answers;
try {
  writeFileSync(join(work, 'Oracle.java'), ORACLE);
  execFileSync(java, [join(work, 'Oracle.java')], { input: '', stdio: ['pipe', 'ignore', 'inherit'] });
  const b64 = (text) => Buffer.from(text, 'utf8').toString('base64');
  const input = `${cases.map((c) => [c.pattern, ...c.inputs].map(b64).join('\t')).join('\n')}\n`;
  const run = spawnSync(java, [join(work, 'Oracle.java')], { input, maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`java failed: ${run.stderr}`);
  answers = run.stdout.toString('utf8').trim().split('\n');
} finally {
  rmSync(work, { recursive: true, force: true });
}

const tally = { bothRefuse: 0, agree: 0, untranslatable: {}, failures: [] };
cases.forEach(({ pattern, inputs }, i) => {
  const [verdict, detail, index] = (answers[i] ?? '').split('\t');
  const ours = compileJavaRegex(pattern);
  const problem = isJavaRegexProblem(ours) ? ours : undefined;
  if (verdict === 'ERR') {
    const description = Buffer.from(detail, 'base64').toString('utf8');
    if (problem?.kind === 'invalid' && problem.message.endsWith(`${description} near index ${index}`)) tally.bothRefuse++;
    else if (problem?.kind === 'untranslatable') tally.bothRefuse++;
    else tally.failures.push({ pattern, java: `${description} near index ${index}`, ours: problem?.message ?? 'accepted' });
  } else if (problem?.kind === 'invalid') {
    tally.failures.push({ pattern, java: 'accepted', ours: problem.message });
  } else if (problem !== undefined) {
    const reason = problem.message.replace(/^regular expression ".*?": /s, '').slice(0, 60);
    tally.untranslatable[reason] = (tally.untranslatable[reason] ?? 0) + 1;
  } else {
    const ourVerdicts = inputs.map((input) => (ours.matches(input) ? '1' : '0')).join('');
    if (ourVerdicts === detail) tally.agree++;
    else tally.failures.push({ pattern, differ: inputs.filter((_, k) => ourVerdicts[k] !== detail[k]).slice(0, 3) });
  }
});

console.log(`seed ${seedOption}: ${count} patterns, ${tally.agree} matched alike, ${tally.bothRefuse} refused by both`);
for (const [reason, n] of Object.entries(tally.untranslatable)) console.log(`  refused as untranslatable (${n}): ${reason}`);
for (const failure of tally.failures.slice(0, 20)) console.log(`FAIL ${JSON.stringify(failure)}`);
exit(tally.failures.length === 0 ? 0 : 1);
