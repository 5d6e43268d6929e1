import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();

/**
 * `npm run build` is `tsc` (silent when it works) then scripts/bundle.mjs. The bundling step runs
 * here on a copy of tsc's output, so the checkout's own dist/bundle is left alone.
 */
function copyForBundling(): string {
  const root = tempDir('refrelay-build');
  cpSync(join(repoRoot, 'dist'), join(root, 'dist'), { recursive: true, filter: (path) => !path.startsWith(join(repoRoot, 'dist', 'bundle')) });
  mkdirSync(join(root, 'scripts'));
  cpSync(join(repoRoot, 'scripts', 'bundle.mjs'), join(root, 'scripts', 'bundle.mjs'));
  cpSync(join(repoRoot, 'rolldown.config.mjs'), join(root, 'rolldown.config.mjs'));
  cpSync(join(repoRoot, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  return root;
}

const bundle = (cwd: string) => spawnSync(process.execPath, ['scripts/bundle.mjs'], { cwd, env: { ...process.env, NO_COLOR: '1' }, encoding: 'utf8' });

describe('npm run build', () => {
  it('runs tsc and then scripts/bundle.mjs', () => {
    const { scripts } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.build).toBe('tsc -p tsconfig.build.json && node scripts/bundle.mjs');
  });

  it('bundles without printing anything when it works', () => {
    const root = copyForBundling();
    const result = bundle(root);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('');
    expect(result.status).toBe(0);
    expect(existsSync(join(root, 'dist', 'bundle', 'main.js'))).toBe(true);
  });

  it('prints the error and exits 1 when the bundle cannot be made', () => {
    const root = copyForBundling();
    appendFileSync(join(root, 'dist', 'cli', 'main.js'), "\nimport './nosuch.js';\n");
    const result = bundle(root);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^bundling failed: Build failed with 1 error:\n/);
    expect(result.stderr).toContain("Could not resolve './nosuch.js' in dist/cli/main.js");
    expect(result.status).toBe(1);
  });
});
