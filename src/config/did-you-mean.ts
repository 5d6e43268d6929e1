/** Largest edit distance still offered as a suggestion. */
const MAX_DISTANCE = 3;

/**
 * The closest candidate to a misspelt key (case-insensitive Levenshtein ≤ 3),
 * or undefined. A candidate at least as far away as the input is long is not
 * a typo of it (`foo` is 3 edits from `url`), so it is not offered.
 */
export function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = levenshtein(needle, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= MAX_DISTANCE && bestDistance < needle.length ? best : undefined;
}

export function unknownKeyMessage(input: string, candidates: readonly string[]): string {
  const suggestion = didYouMean(input, candidates);
  return suggestion === undefined ? 'unknown key' : `unknown key (did you mean "${suggestion}"?)`;
}

export function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
