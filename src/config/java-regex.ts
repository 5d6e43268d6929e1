import { JavaSyntaxError, UntranslatableError } from './java-regex-reader.js';
import { translateJavaRegex } from './java-regex-translate.js';
import type { JavaRegex } from './types.js';

/** Why a pattern was not compiled: Java refuses it too, or only refrelay cannot match it alike. */
export interface JavaRegexProblem {
  readonly kind: 'invalid' | 'untranslatable';
  readonly message: string;
}

/**
 * Compiles a regular expression written for Gerrit (Java's java.util.regex syntax) to match
 * whole inputs, as Java's `String.matches` and `Matcher.matches` do. The pattern is
 * translated, not reinterpreted: `\Q…\E`, possessive quantifiers, inline flags, `&&` in
 * classes, ASCII-only `\w \d \s` all keep their Java meaning; what cannot keep it is refused.
 */
export function compileJavaRegex(text: string): JavaRegex | JavaRegexProblem {
  let source: string;
  try {
    source = translateJavaRegex(text);
  } catch (error) {
    if (error instanceof JavaSyntaxError) {
      return { kind: 'invalid', message: `invalid regular expression ${JSON.stringify(text)}: ${error.description} near index ${error.index}` };
    }
    if (error instanceof UntranslatableError) {
      return { kind: 'untranslatable', message: `regular expression ${JSON.stringify(text)}: ${error.message}` };
    }
    throw error;
  }
  let regex: RegExp;
  try {
    regex = new RegExp(`^(?:${source})$`, 'v');
  } catch (error) {
    // A translation JavaScript refuses is a gap in the translator; the config still gets a message.
    const reason = error instanceof Error ? error.message : String(error);
    return { kind: 'untranslatable', message: `regular expression ${JSON.stringify(text)}: refrelay cannot translate it (${reason})` };
  }
  return { text, matches: (input) => regex.test(input) };
}

export function isJavaRegexProblem(value: JavaRegex | JavaRegexProblem): value is JavaRegexProblem {
  return 'kind' in value;
}
