import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** End-to-end and multi-process tests run the built CLI, so build once before any test. */
export default function setup(): void {
  if (process.env.REFRELAY_SKIP_BUILD === '1') return;
  const root = fileURLToPath(new URL('../..', import.meta.url));
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
}
