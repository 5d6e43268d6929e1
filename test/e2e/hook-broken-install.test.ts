import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hookScript } from '../../src/intake/hook-script.js';
import { runCli } from '../support/cli.js';
import { git, gitEnv, initBare, makeWorkTree } from '../support/git.js';
import { cliBin, repoRoot } from '../support/paths.js';
import { writeConfig } from '../support/refrelay-node.js';
import { useTempDirs } from '../support/temp-dir.js';

/**
 * Issue 21: hooks ran the refrelay of a source checkout, and while `npm ci` rewrote it every hook
 * failed with a stack trace. Here the hook points at a copy of the built package laid out as
 * `npm install -g` lays it out, and that copy is then broken bit by bit under real pushes.
 */
const tempDir = useTempDirs();

const RECOVERY = "the push itself succeeded; once refrelay runs again, 'refrelay verify --fix' (or 'refrelay replicate PROJECT') queues what the mirrors miss";

interface Site {
  root: string;
  repo: string;
  config: string;
  /** The package as `npm install -g` puts it: $prefix/lib/node_modules/refrelay. */
  install: string;
  /** The command on PATH: $prefix/bin/refrelay, a symlink to the package's bin/refrelay.js. */
  globalBin: string;
  work: string;
}

function site(): Site {
  const root = realpathSync(tempDir('refrelay-broken-install'));
  const repo = initBare(join(root, 'base', 'app.git'));
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${join(root, 'base')}`,
    `  spoolPath = ${join(root, 'spool')}`,
    '[remote "mirror"]',
    `  url = ${join(root, 'dest')}/\${name}.git`,
  ]);
  const install = join(root, 'prefix', 'lib', 'node_modules', 'refrelay');
  mkdirSync(install, { recursive: true });
  cpSync(join(repoRoot, 'bin'), join(install, 'bin'), { recursive: true });
  cpSync(join(repoRoot, 'dist', 'bundle'), join(install, 'dist', 'bundle'), { recursive: true });
  cpSync(join(repoRoot, 'package.json'), join(install, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(install, 'node_modules'));
  const globalBin = join(root, 'prefix', 'bin', 'refrelay');
  mkdirSync(join(root, 'prefix', 'bin'));
  symlinkSync('../lib/node_modules/refrelay/bin/refrelay.js', globalBin);
  return { root, repo, config, install, globalBin, work: makeWorkTree(join(root, 'work'), 1) };
}

/** A real push of a new commit on main; the hook's lines, without git's `remote: ` prefix. */
function push(s: Site): { status: number | null; hookLines: string[] } {
  git(s.work, ['commit', '-q', '--allow-empty', '-m', `commit ${Date.now()}`]);
  const result = spawnSync('git', ['push', s.repo, 'main'], { cwd: s.work, env: gitEnv, encoding: 'utf8' });
  expect(git(s.repo, ['rev-parse', 'main']).trim()).toBe(git(s.work, ['rev-parse', 'HEAD']).trim());
  const hookLines = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('remote: '))
    .map((line) => line.slice('remote: '.length).trimEnd());
  return { status: result.status, hookLines };
}

describe('a hook whose refrelay cannot start', () => {
  it('hook install records the real path of the installed package, run through the symlink on PATH', () => {
    const s = site();
    const script = join(s.install, 'bin', 'refrelay.js');
    const installed = spawnSync(s.globalBin, ['hook', 'install', '--repo', s.repo, '--config', s.config], { encoding: 'utf8' });
    expect(installed.stderr).toBe('');
    expect(installed.status).toBe(0);
    expect(installed.stdout).toBe(
      `hooks run the refrelay at ${script} (node ${process.execPath})\ninstall: ${join(s.repo, 'hooks', 'post-receive')}\n1 hook changed, 0 unchanged\n`,
    );
    expect(readFileSync(join(s.repo, 'hooks', 'post-receive'), 'utf8')).toContain(`\n  refrelay='${script}'\n`);
    expect(push(s).hookLines).toEqual(['refrelay: queued 1 task for app']);
  });

  it('from a source checkout hook install says the hooks depend on it, and hook install from the installed package rewrites them', () => {
    const s = site();
    const hook = join(s.repo, 'hooks', 'post-receive');
    const fromCheckout = runCli(['hook', 'install', '--repo', s.repo, '--config', s.config]);
    expect(fromCheckout.status).toBe(0);
    expect(fromCheckout.stdout).toBe(
      `hooks run the refrelay at ${realpathSync(cliBin)} (node ${process.execPath})\n` +
        'note: that is not an installed package: the hooks depend on this checkout, and fail to start (pushes still succeed) while `npm ci` or a build rewrites it; for production, install refrelay with `npm install -g` and run its `hook install`\n' +
        `install: ${hook}\n1 hook changed, 0 unchanged\n`,
    );
    const fromPackage = spawnSync(s.globalBin, ['hook', 'install', '--repo', s.repo, '--config', s.config], { encoding: 'utf8' });
    expect(fromPackage.stdout).toBe(
      `hooks run the refrelay at ${join(s.install, 'bin', 'refrelay.js')} (node ${process.execPath})\nupdate (it ran another refrelay, node or config): ${hook}\n1 hook changed, 0 unchanged\n`,
    );
    const again = spawnSync(s.globalBin, ['hook', 'install', '--repo', s.repo, '--config', s.config], { encoding: 'utf8' });
    expect(again.stdout).toContain(`already installed: ${hook}\n0 hooks changed, 1 unchanged\n`);
  });

  it('keeps pushes working and says so in one line when a build file, the whole build or the script is missing', () => {
    const s = site();
    const script = join(s.install, 'bin', 'refrelay.js');
    expect(spawnSync(s.globalBin, ['hook', 'install', '--repo', s.repo, '--config', s.config], { encoding: 'utf8' }).status).toBe(0);

    // A chunk the enqueue path loads is gone: refrelay's main cannot load its command.
    rmSync(join(s.install, 'dist', 'bundle', 'enqueue-command.js'));
    const chunkMissing = push(s);
    expect(chunkMissing.status).toBe(0);
    expect(chunkMissing.hookLines).toEqual([
      `refrelay: could not queue replication (refrelay at ${script} failed to start: Cannot find module '${s.install}/dist/bundle/enqueue-command.js' imported from ${s.install}/dist/bundle/main.js); ${RECOVERY}`,
    ]);

    // No build at all: bin/refrelay.js cannot load the CLI.
    rmSync(join(s.install, 'dist'), { recursive: true });
    const buildMissing = push(s);
    expect(buildMissing.status).toBe(0);
    expect(buildMissing.hookLines).toEqual([
      `refrelay: could not queue replication (refrelay at ${script} failed to start: Cannot find module '${s.install}/dist/bundle/main.js' imported from ${script}); ${RECOVERY}`,
    ]);

    rmSync(join(s.install, 'bin', 'refrelay.js'));
    const scriptMissing = push(s);
    expect(scriptMissing.status).toBe(0);
    expect(scriptMissing.hookLines).toEqual([
      `refrelay: could not queue replication (refrelay at ${script} failed to start: the file is missing); ${RECOVERY}`,
    ]);
  });

  it('still exits with the status of the hook it chains, and names a node that is gone', () => {
    const s = site();
    const hook = join(s.repo, 'hooks', 'post-receive');
    writeFileSync(`${hook}.refrelay-chained`, '#!/bin/sh\ncat >/dev/null\nexit 7\n', { mode: 0o755 });
    // As after a node upgrade under a version manager: the node the hook was installed with is gone.
    const gone = join(s.root, 'node-18', 'bin', 'node');
    writeFileSync(hook, hookScript('post-receive', { node: gone, script: join(s.install, 'bin', 'refrelay.js'), config: s.config }), { mode: 0o755 });
    const ran = spawnSync(hook, [], {
      cwd: s.repo,
      env: { ...gitEnv, GIT_DIR: '.' },
      input: `${'0'.repeat(40)} ${'a'.repeat(40)} refs/heads/main\n`,
      encoding: 'utf8',
    });
    expect(ran.stderr).toBe(
      `refrelay: could not queue replication (refrelay at ${join(s.install, 'bin', 'refrelay.js')} failed to start: node is missing at ${gone}); ${RECOVERY}\n`,
    );
    expect(ran.status).toBe(7);
    expect(push(s).hookLines).toEqual([
      `refrelay: could not queue replication (refrelay at ${join(s.install, 'bin', 'refrelay.js')} failed to start: node is missing at ${gone}); ${RECOVERY}`,
    ]);
  });

  it('hook install --help says that hooks installed from a source checkout depend on it', () => {
    const result = spawnSync(process.execPath, [join(repoRoot, 'bin', 'refrelay.js'), 'hook', 'install', '--help'], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout.replace(/\s+/g, ' ')).toContain(
      'Hooks run this refrelay, by its real path. Installed from a source checkout, they depend on that checkout: while npm ci or a build rewrites it they fail to start (pushes still succeed, and the hook says so).',
    );
  });
});
