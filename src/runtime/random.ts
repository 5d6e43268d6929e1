import { randomBytes } from 'node:crypto';

/** Randomness reaches the core only through this interface. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** A short unique token for file names. */
  token(): string;
}

export const systemRandom: Random = { next: () => Math.random(), token: () => randomBytes(6).toString('hex') };
