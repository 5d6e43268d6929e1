import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/** `npm run <script>`: the same commands a developer runs (`npm run lint`; `npm run format` fixes formatting). */
function run(script: string): { status: number | null; output: string } {
  const result = spawnSync('npm', ['run', '--silent', script], { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('house style', () => {
  it('eslint finds no problem in src/, test/ and scripts/', () => {
    const { status, output } = run('lint:code');
    expect(output).toBe('');
    expect(status).toBe(0);
  }, 600_000);

  it('every source file is formatted by prettier', () => {
    const { status, output } = run('lint:format');
    expect(output).toBe('');
    expect(status).toBe(0);
  }, 300_000);
});
