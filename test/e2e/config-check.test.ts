import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fixturesDir, repoRoot } from '../support/paths.js';

describe('refrelay config check', () => {
  it('prints every remote of a real Gerrit config with its URLs and exits 0', () => {
    const file = join(fixturesDir, 'config', 'gerrit-real.config');
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('eu.mirror');
    expect(result.stderr).toMatch(/^warning: .*authGroup/m);
  });

  it('accepts the shipped example', () => {
    const result = runCli(['config', 'check', '--config', join(repoRoot, 'replication.config.example')]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('prints JSON with durations in milliseconds', () => {
    const result = runCli(['config', 'check', '--json', '--config', join(repoRoot, 'replication.config.example')]);
    expect(result.status).toBe(0);
    const json = JSON.parse(result.stdout) as { remotes: Array<{ name: string; replicationDelayMs: number }> };
    expect(json.remotes.map((remote) => remote.name)).toEqual(['dr', 'github.public']);
    expect(json.remotes[0]!.replicationDelayMs).toBe(15_000);
  });

  it('reports every problem of an invalid file at once with exit 3', () => {
    const file = join(fixturesDir, 'config', 'invalid-values.config');
    const expected = readFileSync(join(fixturesDir, 'config', 'invalid-values.expected'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.replace(/^[^:]+:/, `${file}:`));
    const result = runCli(['config', 'check', '--config', file]);
    expect(result.status).toBe(3);
    expect(result.stderr.trim().split('\n')).toEqual(expected);
    expect(result.stdout).toBe('');
  });

  it('finds the config through REFRELAY_CONFIG when --config is absent', () => {
    const file = join(repoRoot, 'replication.config.example');
    const result = runCli(['config', 'check'], { env: { REFRELAY_CONFIG: file } });
    expect(result.status).toBe(0);
  });

  it('says which file is missing with exit 3', () => {
    const result = runCli(['config', 'check', '--config', '/nonexistent/replication.config']);
    expect(result.status).toBe(3);
    expect(result.stderr).toContain('/nonexistent/replication.config');
  });

  it('rejects an unknown command with exit 2', () => {
    const result = runCli(['frobnicate']);
    expect(result.status).toBe(2);
  });
});
