import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/**
 * The command lines of every yargs `.example(…)` in `src/cli/commands.ts` and `src/cli/commands/*.ts`,
 * as written there, without repeats. Throws when an `.example(` is not a string literal: an example
 * this cannot read would escape the test that runs them.
 */
export function helpExamples(): string[] {
  const cli = join(repoRoot, 'src', 'cli');
  const files = [
    'commands.ts',
    ...readdirSync(join(cli, 'commands'))
      .filter((name) => name.endsWith('.ts'))
      .sort()
      .map((name) => join('commands', name)),
  ];
  const lines = files.flatMap((file) => {
    const source = readFileSync(join(cli, file), 'utf8');
    const calls = source.split('.example(').length - 1;
    const found = [...source.matchAll(/\.example\(\s*(?:'([^'\\]*)'|"([^"\\]*)")/g)].map((match) => match[1] ?? match[2] ?? '');
    if (found.length !== calls) throw new Error(`read ${found.length} of the ${calls} .example( calls in src/cli/${file}`);
    return found;
  });
  return [...new Set(lines)];
}

/**
 * Lines of README.md's fenced code blocks that run refrelay (`refrelay <command>`), and the
 * commands the comments of replication.config.example give, as written.
 */
export function documentedCommandLines(): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of readFileSync(join(repoRoot, 'README.md'), 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (fenced && RUNS_REFRELAY.test(line)) lines.push(line.trim());
  }
  for (const line of readFileSync(join(repoRoot, 'replication.config.example'), 'utf8').split('\n')) {
    // A command the comment introduces with a colon ("Check it with: refrelay …"), not prose naming one.
    const command = /^\s*#[^:]*:\s+(refrelay \S.*)$/.exec(line)?.[1];
    if (command !== undefined && RUNS_REFRELAY.test(command)) lines.push(command);
  }
  return [...new Set(lines)];
}

const RUNS_REFRELAY = /(?:^|[\s;&|])refrelay (?:init|config|enqueue|status|daemon|hook|replicate|verify|wait|retry|import-gerrit-queue)\b/;
