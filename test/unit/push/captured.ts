import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../../support/paths.js';

/** A real git run captured by test/integration/push/git-output-*.test.ts. */
export interface Captured {
  readonly description: string;
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function captured(name: string): Captured {
  return JSON.parse(readFileSync(join(fixturesDir, 'git-output', `${name}.json`), 'utf8')) as Captured;
}
