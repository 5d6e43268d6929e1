/** Randomness reaches the core only through this interface. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** A short unique token for file names. */
  token(): string;
}

import { randomBytes } from 'node:crypto';

/** Tokens are cut from a pool of random bytes: one `randomBytes` call serves 256 of them. */
const TOKEN_BYTES = 6;
let pool = Buffer.alloc(0);
let used = 0;

export const systemRandom: Random = {
  next: () => Math.random(),
  token: () => {
    if (used + TOKEN_BYTES > pool.length) {
      pool = randomBytes(TOKEN_BYTES * 256);
      used = 0;
    }
    used += TOKEN_BYTES;
    return pool.toString('hex', used - TOKEN_BYTES, used);
  },
};
