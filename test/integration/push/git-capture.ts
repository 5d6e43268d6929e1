import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitEnv } from '../../support/git.js';
import { fixturesDir } from '../../support/paths.js';

/** One real git run, as stored in fixtures/git-output/<name>.json. */
export interface CapturedRun {
  readonly description: string;
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export const gitOutputDir = join(fixturesDir, 'git-output');

/** Set REFRELAY_CAPTURE=1 to rewrite the fixtures from what this machine's git prints now. */
export const capturing = process.env.REFRELAY_CAPTURE === '1';

/**
 * Runs git asynchronously (loopback servers in this process must keep
 * answering) in the hermetic environment, with LANG=C as GitPusher uses.
 */
export function runGit(cwd: string, args: readonly string[], description: string, env: Record<string, string> = {}): Promise<CapturedRun> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env: { ...gitEnv, LANG: 'C', ...env }, encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      resolve({ description, argv: ['git', ...args], exitCode: code, stdout, stderr });
    });
  });
}

/**
 * In capture mode, stores the run with the scratch folder renamed to a stable
 * placeholder, so fixture diffs show what git changed, not where tmp was.
 */
export function keep(name: string, run: CapturedRun, scratch: string): CapturedRun {
  if (capturing) {
    const stable = JSON.parse(JSON.stringify(run).replaceAll(scratch, '/tmp/refrelay-capture')) as CapturedRun;
    mkdirSync(gitOutputDir, { recursive: true });
    writeFileSync(join(gitOutputDir, `${name}.json`), `${JSON.stringify(stable, null, 2)}\n`);
  }
  return run;
}

export function loadCaptured(name: string): CapturedRun {
  return JSON.parse(readFileSync(join(gitOutputDir, `${name}.json`), 'utf8')) as CapturedRun;
}
