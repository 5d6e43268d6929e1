import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appSource, gitEnv, refsOf } from '../support/git.js';
import { repoRoot } from '../support/paths.js';
import { writeConfig } from '../support/refrelay-node.js';

// Packing and installing take a few seconds with a warm npm cache, more on a cold one.
const INSTALL_TIMEOUT_MS = 120_000;

/**
 * The environment of an operator's shell: the node running the tests first on PATH (the installed
 * bin's `#!/usr/bin/env node` must find it), and none of the npm_* variables that `npm run` or
 * `npx` set for the test runner, which would point pack and install at this checkout.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_(lifecycle_|package_|command$|execpath$|node_execpath$)/i.test(key)) continue;
    if (/^npm_config_(prefix|global|global_prefix|local_prefix|dry_run|json|pack_destination)$/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
  env.NO_COLOR = '1';
  return env;
}

function run(command: string, args: string[], cwd: string, env = cleanEnv()): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS });
}

function explain(result: SpawnSyncReturns<string>): string {
  return `exit ${result.status}${result.error ? ` (${result.error.message})` : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;
}

const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };

describe('the npm package', () => {
  let root = '';
  let prefix = '';
  let refrelay = '';

  beforeAll(() => {
    // Packs the built tree: dist/ must exist (scripts/test.sh and the global setup build it).
    root = mkdtempSync(join(tmpdir(), 'refrelay-package-'));
    prefix = join(root, 'prefix');
    const pack = run('npm', ['pack', '--pack-destination', root, '--json', '--loglevel=error'], repoRoot);
    expect(pack.status, explain(pack)).toBe(0);
    const [packed] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
    const tarball = join(root, packed!.filename);
    expect(existsSync(tarball)).toBe(true);
    const install = run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], root);
    expect(install.status, explain(install)).toBe(0);
    refrelay = join(prefix, 'bin', 'refrelay');
  }, INSTALL_TIMEOUT_MS);

  afterAll(() => {
    if (root !== '') rmSync(root, { recursive: true, force: true });
  });

  it('installs a refrelay command that prints the package version', () => {
    const result = run(refrelay, ['--version'], root);
    expect(result.status, explain(result)).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });

  it('ships every program of bin/ executable, the example config and the systemd unit', () => {
    const installed = join(prefix, 'lib', 'node_modules', 'refrelay');
    for (const name of readdirSync(join(repoRoot, 'bin'))) {
      expect(statSync(join(installed, 'bin', name)).mode & 0o111, name).toBe(0o111);
    }
    for (const file of ['replication.config.example', 'contrib/refrelay.service']) {
      expect(readFileSync(join(installed, file), 'utf8')).toBe(readFileSync(join(repoRoot, file), 'utf8'));
    }
  });

  it('checks the shipped example config', () => {
    const result = run(refrelay, ['config', 'check', '--config', join(repoRoot, 'replication.config.example')], root);
    expect(result.status, explain(result)).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('remote "dr"\n');
    expect(result.stdout).toContain('remote "github.public"\n');
  });

  it('queues an update and a drain delivers it, with only the installed dependencies', () => {
    const site = mkdtempSync(join(root, 'site-'));
    const { store, base, source } = appSource(site);
    const dest = join(site, 'dest');
    const config = writeConfig(join(site, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  httpListen = off',
      '  distributionInterval = 200ms',
      '  randomDelay = 0',
      '[remote "mirror"]',
      `  url = ${dest}/\${name}.git`,
      '  replicationDelay = 0',
    ]);
    // Run from outside the checkout, so nothing resolves against the repository's node_modules.
    const shell = cleanEnv();
    const env = { ...shell, ...gitEnv, PATH: shell.PATH };
    const enqueue = run(refrelay, ['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--ref', 'refs/heads/feature'], site, env);
    expect(enqueue.status, explain(enqueue)).toBe(0);
    const drain = run(refrelay, ['daemon', '--drain', '--config', config, '--log-format', 'json'], site, env);
    expect(drain.status, explain(drain)).toBe(0);
    expect(refsOf(join(dest, 'app.git'))).toEqual(refsOf(source));
  });
});
