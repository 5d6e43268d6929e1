import { describe, expect, it } from 'vitest';
import { didYouMean, levenshtein, unknownKeyMessage } from '../../../src/config/did-you-mean.js';

const keys = ['url', 'push', 'replicationDelay', 'rescheduleDelay', 'threads', 'mirror'];

describe('didYouMean', () => {
  it('suggests the closest key regardless of case', () => {
    expect(didYouMean('replicationdeley', keys)).toBe('replicationDelay');
    expect(didYouMean('THREAD', keys)).toBe('threads');
  });

  it('suggests nothing when every key is more than 3 edits away', () => {
    expect(didYouMean('colour', keys)).toBeUndefined();
  });

  it('does not offer a key as far away as the input is long', () => {
    expect(didYouMean('foo', ['url'])).toBeUndefined();
  });
});

describe('unknownKeyMessage', () => {
  it('says "unknown key" with a suggestion only when one is close', () => {
    expect(unknownKeyMessage('replicationdeley', keys)).toBe('unknown key (did you mean "replicationDelay"?)');
    expect(unknownKeyMessage('colour', keys)).toBe('unknown key');
  });
});

describe('levenshtein', () => {
  it('counts insertions, deletions and substitutions', () => {
    expect(levenshtein('kitten', 'sitting')).toBe(3);
    expect(levenshtein('', 'abc')).toBe(3);
    expect(levenshtein('abc', 'abc')).toBe(0);
  });
});
