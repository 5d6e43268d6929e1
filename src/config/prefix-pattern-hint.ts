import { compileJavaRegex, isJavaRegexProblem } from './java-regex.js';
import { outlineJavaRegex, type OutlineAlternative, type OutlineElement } from './java-regex-outline.js';

/** The keys whose patterns must match a whole name, and what they are matched against. */
export type WholeNamePatternKey = 'excludedRefsPattern' | 'projects' | 'excludeProjects';

/**
 * Folders of refs that git and Gerrit fill: a ref named exactly like one cannot sit beside the refs
 * under it (git keeps refs as paths), so a pattern that matches only this name was meant as a prefix.
 */
const REF_FOLDERS = new Set([
  'refs',
  'refs/heads',
  'refs/tags',
  'refs/notes',
  'refs/remotes',
  'refs/changes',
  'refs/meta',
  'refs/users',
  'refs/groups',
  'refs/draft-comments',
  'refs/starred-changes',
  'refs/sequences',
  'refs/cache-automerge',
]);

interface DeadAlternative {
  readonly text: string;
  /** Where the fix goes, and what it inserts. */
  readonly at: number;
  readonly insert: string;
  /** The whole name it matches when it is plain text, to confirm the reading against the compiled pattern. */
  readonly literal?: string;
  readonly why: 'slash' | 'folder';
}

/**
 * A warning for a pattern written as a prefix, as if it were searched for at the start of a name:
 * Gerrit matches `excludedRefsPattern` and `^regex` project patterns against the whole name, so
 * `^refs/heads/wip/` excludes nothing (no ref name ends in `/`) and `^team/` selects no project.
 * Only patterns that provably match no such name are flagged (every match ends in `/`, or is
 * exactly a ref folder such as `refs/tags`); `refs/meta/config` and `^team/app` name real refs and
 * projects and are left alone. An exact `projects` entry ending in `/` is the same mistake.
 * Returns the message for the key, or undefined.
 */
export function prefixPatternHint(key: WholeNamePatternKey, text: string): string | undefined {
  const noun = key === 'excludedRefsPattern' ? 'ref' : 'project';
  const verb = key === 'projects' ? 'select' : 'exclude';
  if (key !== 'excludedRefsPattern' && !text.startsWith('^')) {
    if (!text.endsWith('/')) return undefined;
    return (
      `"${text}" matches no project: a name without * or ^ is one exact project name, and none ends in "/"; ` +
      `to ${verb} the projects under it, append *: "${text}*"`
    );
  }
  const dead = deadAlternatives(text, noun);
  if (dead.length === 0) return undefined;
  let fixed = text;
  for (const alternative of [...dead].sort((a, b) => b.at - a.at)) fixed = fixed.slice(0, alternative.at) + alternative.insert + fixed.slice(alternative.at);
  if (!readingConfirmed(text, fixed, dead)) return undefined;
  const rule = key === 'excludedRefsPattern' ? 'the pattern must match the whole ref name' : 'a ^regex must match the whole project name';
  const first = dead[0]!;
  const whole = dead.length === 1 && first.text === text;
  const parts = dead.map((d) => `"${d.text}"`).join(' and ');
  const what = whole ? `"${text}" matches` : `"${text}": its alternative${dead.length > 1 ? `s ${parts} match` : ` ${parts} matches`}`;
  const matches =
    first.why === 'slash'
      ? `${what} no ${noun}: ${rule}, as in Gerrit, and no ${noun} name ends in "/"`
      : `${what} only a ref named exactly "${first.literal}", never one under ${first.literal}/: ${rule}, as in Gerrit`;
  const append = dead.every((d) => d.insert.endsWith('/.*')) ? '/.*' : '.*';
  return `${matches}; to ${verb} the ${noun}s under it, append ${append}: "${fixed}"`;
}

function deadAlternatives(text: string, noun: 'ref' | 'project'): DeadAlternative[] {
  const outline = outlineJavaRegex(text);
  if (outline === undefined) return [];
  const dead: DeadAlternative[] = [];
  for (const alternative of outline.alternatives) {
    const last = lastConsuming(alternative.elements);
    if (last === undefined) continue;
    const insertAfter = (suffix: string): Pick<DeadAlternative, 'at' | 'insert'> => ({
      at: last.end,
      insert: `${last.openQuote === true ? '\\E' : ''}${suffix}`,
    });
    const part = text.slice(alternative.start, alternative.end);
    const literal = literalText(alternative.elements);
    if (endsInSlash(alternative)) {
      dead.push({ text: part, ...insertAfter('.*'), why: 'slash', ...(literal === undefined ? {} : { literal }) });
    } else if (noun === 'ref' && outline.alternatives.length === 1 && !outline.flags && literal !== undefined && REF_FOLDERS.has(literal)) {
      // Only a whole pattern: beside other alternatives (`refs/tags|refs/tags/.*`) such a name is merely redundant.
      dead.push({ text: part, ...insertAfter('/.*'), why: 'folder', literal });
    }
  }
  return dead;
}

/** Every match of the alternative ends in `/`: its last consuming element is a `/` that must occur (or a group whose every branch ends so). */
function endsInSlash(alternative: OutlineAlternative): boolean {
  const last = lastConsuming(alternative.elements);
  if (last === undefined || last.min === 0) return false;
  if (last.kind === 'char') return last.char === '/';
  return last.kind === 'group' && last.alternatives.every(endsInSlash);
}

function lastConsuming(elements: readonly OutlineElement[]): OutlineElement | undefined {
  return elements.findLast((element) => element.kind !== 'zero');
}

/** The one name an alternative of plain characters matches, or undefined. */
function literalText(elements: readonly OutlineElement[]): string | undefined {
  let text = '';
  for (const element of elements) {
    if (element.kind === 'zero') continue;
    if (element.kind !== 'char' || element.quantified) return undefined;
    text += element.char;
  }
  return text === '' ? undefined : text;
}

/**
 * The outline is a reading of its own; the compiled patterns must agree with it before anyone is
 * told to change a config: the fix compiles, the original matches each plain dead part as read, and
 * the fix matches a name under it.
 */
function readingConfirmed(text: string, fixed: string, dead: readonly DeadAlternative[]): boolean {
  const original = compileJavaRegex(text);
  const repaired = compileJavaRegex(fixed);
  if (isJavaRegexProblem(original) || isJavaRegexProblem(repaired)) return false;
  return dead.every((d) => d.literal === undefined || (original.matches(d.literal) && repaired.matches(`${d.literal}${d.why === 'slash' ? '' : '/'}x`)));
}
