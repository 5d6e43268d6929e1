import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/paths.js';

describe('npm run demo', () => {
  it('shows the configuration its nodes run with, and ends with every destination in sync', () => {
    const demo = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'demo.mjs')], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(demo.stderr).toBe('');
    expect(demo.status).toBe(0);
    const dump = demo.stdout.slice(demo.stdout.indexOf("== master-1's configuration"), demo.stdout.indexOf('== two refrelay nodes start'));
    expect(dump).toMatch(/^config: .*\/master-1\.config$/m);
    expect(dump).toMatch(/^nodeId: master-1$/m);
    expect(dump).toMatch(/master-2's differs only in nodeId = master-2 and httpListen = 127\.0\.0\.1:\d+$/m);
    if (hostname() !== 'master-1') expect(demo.stdout).not.toContain(`nodeId: ${hostname()}`);
    // The nodes table of status names the same nodes, and a clock a few ms off is +0.0s, never -0.0s.
    expect(demo.stdout).toMatch(/^master-1 +alive +\d+s ago /m);
    expect(demo.stdout).toMatch(/^master-2 +alive +\d+s ago /m);
    expect(demo.stdout).not.toContain('-0.0s');
    expect(demo.stdout.trimEnd().split('\n').at(-1)).toBe('all destinations in sync');
  }, 150_000);
});
