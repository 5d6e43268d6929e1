import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { assertRefName, quoteRefName, refNameProblem } from '../../../src/task/names.js';

describe('ref name length limit', () => {
  it('accepts a ref of exactly 4096 bytes by default and refuses one byte more, naming both lengths', () => {
    const atLimit = `refs/heads/${'a'.repeat(4096 - 'refs/heads/'.length)}`;
    expect(refNameProblem(atLimit)).toBeUndefined();
    expect(refNameProblem(`${atLimit}b`)).toBe('is 4097 bytes long, over the limit of 4096 bytes (replication.maxRefNameBytes)');
  });

  it('counts UTF-8 bytes, not characters', () => {
    // "é" is one UTF-16 unit and two UTF-8 bytes: 11 + 2 × 10 = 31 bytes in 21 characters.
    const ref = `refs/heads/${'é'.repeat(10)}`;
    expect(refNameProblem(ref, 31)).toBeUndefined();
    expect(refNameProblem(ref, 30)).toBe('is 31 bytes long, over the limit of 30 bytes (replication.maxRefNameBytes)');
  });

  it('refuses a 5,000-character ref with a UsageError that shows only a prefix of it', () => {
    const ref = `refs/heads/${'x'.repeat(4989)}`;
    let error: unknown;
    try {
      assertRefName(ref);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      `invalid ref name "refs/heads/${'x'.repeat(53)}"… (5000 characters): is 5000 bytes long, over the limit of 4096 bytes (replication.maxRefNameBytes)`,
    );
  });

  it('takes the limit as an argument, as replication.maxRefNameBytes sets it', () => {
    expect(() => assertRefName('refs/heads/main', 14)).toThrow('is 15 bytes long, over the limit of 14 bytes');
    expect(assertRefName('refs/heads/main', 15)).toBe('refs/heads/main');
  });
});

describe('quoteRefName', () => {
  it('quotes a short name whole and cuts a long one between code points', () => {
    expect(quoteRefName('refs/heads/main')).toBe('"refs/heads/main"');
    // 63 characters, then an emoji (a surrogate pair) as the 64th: kept whole, not split.
    const ref = `refs/heads/${'y'.repeat(52)}😀tail`;
    expect(quoteRefName(ref)).toBe(`"refs/heads/${'y'.repeat(52)}😀"… (68 characters)`);
  });
});
