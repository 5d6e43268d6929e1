import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { freePort } from '../../support/free-port.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { cliBin } from '../../support/paths.js';
import { writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

/** Runs a command line through sh in `cwd`, with `refrelay` on PATH as an installed package puts it. */
function shell(cwd: string, line: string): { status: number | null; stdout: string; stderr: string } {
  const bin = join(cwd, 'bin');
  mkdirSync(bin, { recursive: true });
  symlinkSync(cliBin, join(bin, 'refrelay'));
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
  delete env.REFRELAY_CONFIG;
  const result = spawnSync('sh', ['-c', line], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A project whose two destinations drifted: main moved on and release is new at the master, and
 * the mirror destination still holds a branch deleted at the master.
 */
function driftedSite(name: string, extraRemote: string[] = [], options: { initStore?: boolean } = {}) {
  const root = tempDir(name);
  const work = makeWorkTree(join(root, 'work'), 1);
  const source = initBare(join(root, 'base', 'app.git'));
  const backup = initBare(join(root, 'backup', 'app.git'));
  const dr = initBare(join(root, 'dr', 'app.git'));
  git(work, ['push', '-q', source, 'main']);
  git(work, ['push', '-q', backup, 'main', 'main:refs/heads/old']);
  git(work, ['push', '-q', dr, 'main']);
  git(work, ['commit', '-q', '--allow-empty', '-m', 'newer']);
  git(work, ['push', '-q', source, 'main', 'main:refs/heads/release']);
  const config = writeConfig(
    join(root, 'replication.config'),
    [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "backup"]',
      `  url = file://${join(root, 'backup')}/\${name}.git`,
      '  mirror = true',
      '  replicationDelay = 0',
      '[remote "dr"]',
      `  url = file://${join(root, 'dr')}/\${name}.git`,
      '  replicationDelay = 0',
      ...extraRemote,
    ],
    options,
  );
  const lines = {
    backup: `DRIFT        backup file://${backup}: 1 missing (refs/heads/release), 1 different (refs/heads/main), 1 extra (refs/heads/old)`,
    dr: `DRIFT        dr file://${dr}: 1 missing (refs/heads/release), 1 different (refs/heads/main)`,
  };
  return { root, config, source, backup, dr, lines };
}

describe('refrelay verify: what an operator reads', () => {
  it('extra refs are drift on a mirror remote only; without mirror they are reported once, in the same words, and never fail verify', () => {
    const root = tempDir('refrelay-verify-extra');
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', initBare(join(root, 'base', 'app.git')), 'main']);
    const mirrorDest = initBare(join(root, 'mirror', 'app.git'));
    const plainDest = initBare(join(root, 'plain', 'app.git'));
    for (const dest of [mirrorDest, plainDest]) git(work, ['push', '-q', dest, 'main', 'main:refs/heads/wip/experiment']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '[remote "mirror"]',
      `  url = ${join(root, 'mirror')}/\${name}.git`,
      '  mirror = true',
      '[remote "plain"]',
      `  url = ${join(root, 'plain')}/\${name}.git`,
    ]);
    const kept = '1 extra kept at the destination (mirror off): refs/heads/wip/experiment';

    expect(runCli(['verify', '--config', config])).toMatchObject({
      status: 1,
      stdout: [
        `DRIFT        mirror ${mirrorDest}: 1 extra (refs/heads/wip/experiment)`,
        `in sync      plain ${plainDest} (1 ref); ${kept}`,
        '2 destinations: 1 in sync, 1 drifted, 0 unreachable',
        '',
      ].join('\n'),
    });
    expect(runCli(['verify', '--remote', 'plain', '--config', config])).toMatchObject({
      status: 0,
      stdout: `in sync      plain ${plainDest} (1 ref); ${kept}\n1 destination: 1 in sync, 0 drifted, 0 unreachable\n`,
    });

    git(work, ['push', '-q', join(root, 'base', 'app.git'), 'main:refs/heads/new']);
    expect(runCli(['verify', '--remote', 'plain', '--config', config])).toMatchObject({
      status: 1,
      stdout: `DRIFT        plain ${plainDest}: 1 missing (refs/heads/new); ${kept}\n1 destination: 0 in sync, 1 drifted, 0 unreachable\n`,
    });
  });

  it('a pattern that names no project is a usage error (exit 2) naming the pattern and where projects were looked for', () => {
    const root = tempDir('refrelay-verify-nosuch');
    const base = join(root, 'base');
    git(makeWorkTree(join(root, 'work'), 1), ['push', '-q', initBare(join(base, 'app.git')), 'main']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
    ]);
    const where = `(projects are the <name>.git repositories under ${base}, replication.basePath in ${config})`;

    expect(runCli(['verify', 'nosuch', '--config', config])).toMatchObject({
      status: 2,
      stdout: '',
      stderr: `refrelay: verify: no project "nosuch" ${where}\n`,
    });
    // One pattern that matches does not hide one that does not.
    expect(runCli(['verify', 'app', 'team/*', '^x.*', '--config', config])).toMatchObject({
      status: 2,
      stdout: '',
      stderr: `refrelay: verify: "team/*" matched no project; "^x.*" matched no project ${where}\n`,
    });
  });

  it("an unreachable destination is reported with git's fatal line, not the advice that follows it", () => {
    const site = driftedSite('refrelay-verify-unreachable-reason');
    const gone = join(site.root, 'gone', 'app.git');
    const config = writeConfig(join(site.root, 'gone.config'), [
      '[replication]',
      `  storePath = ${join(site.root, 'store')}`,
      `  basePath = ${join(site.root, 'base')}`,
      '[remote "gone"]',
      `  url = ${join(site.root, 'gone')}/\${name}.git`,
    ]);

    expect(runCli(['verify', '--config', config])).toEqual({
      status: 1,
      stdout: [
        `UNREACHABLE  gone ${gone}: fatal: '${gone}' does not appear to be a git repository`,
        '1 destination: 0 in sync, 0 drifted, 1 unreachable',
        '',
      ].join('\n'),
      stderr: '',
    });
  });

  it('a --parallel that is not a whole number ≥ 1 is a usage error (exit 2) naming the flag and the value', () => {
    const site = driftedSite('refrelay-verify-parallel');
    for (const [given, shown] of [
      ['abc', 'NaN'],
      ['0', '0'],
      ['2.5', '2.5'],
    ]) {
      expect(runCli(['verify', '--parallel', given!, '--config', site.config])).toEqual({
        status: 2,
        stdout: '',
        stderr: `refrelay: verify: --parallel must be a whole number ≥ 1, got ${shown}\n`,
      });
    }
  });

  it('the example "refrelay verify --fix && refrelay daemon --drain" queues the repairs, exits 0, and the drain brings every destination in sync', () => {
    const site = driftedSite('refrelay-verify-fix-drain');

    const result = shell(site.root, 'refrelay verify --fix && refrelay daemon --drain');
    expect(result.status).toBe(0);
    expect(
      result.stdout.startsWith(
        [site.lines.backup, site.lines.dr, '2 destinations: 0 in sync, 2 drifted, 0 unreachable; queued 2 tasks to repair the drift', ''].join('\n'),
      ),
    ).toBe(true);
    expect(refsOf(site.backup)).toEqual(refsOf(site.source));
    expect(refsOf(site.dr)).toEqual(refsOf(site.source));
    expect(runCli(['verify', '--fix', '--config', site.config])).toMatchObject({
      status: 0,
      stdout: [
        `in sync      backup file://${site.backup} (2 refs)`,
        `in sync      dr file://${site.dr} (2 refs)`,
        '2 destinations: 2 in sync, 0 drifted, 0 unreachable; queued 0 tasks to repair the drift',
        '',
      ].join('\n'),
    });
  });

  it('verify --fix exits 1 when the repairs cannot be queued, so the drain in the example does not run', () => {
    const site = driftedSite('refrelay-verify-fix-nostore', [], { initStore: false });
    const store = join(site.root, 'store');

    const result = shell(site.root, 'refrelay verify --fix && refrelay daemon --drain');
    expect(result).toMatchObject({
      status: 1,
      stdout: [site.lines.backup, site.lines.dr, '2 destinations: 0 in sync, 2 drifted, 0 unreachable; could not queue 2 tasks to repair the drift', ''].join(
        '\n',
      ),
      stderr:
        `refrelay: verify --fix: no refrelay store at ${store} (refrelay-store.json is missing). If the store is on a network filesystem, it may not be mounted; ` +
        'to create a new store there, run: refrelay init --config FILE\n',
    });
  });

  it('verify --fix exits 4 when a destination is unreachable, having queued the repairs for the others', async () => {
    const port = await freePort();
    const site = driftedSite('refrelay-verify-fix-unreachable', ['[remote "down"]', `  url = git://127.0.0.1:${port}/\${name}.git`]);

    const result = runCli(['verify', '--fix', '--config', site.config]);
    expect(result.status).toBe(4);
    const lines = result.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual([site.lines.backup, site.lines.dr]);
    expect(lines[2]).toMatch(new RegExp(`^UNREACHABLE  down git://127\\.0\\.0\\.1:${port}/app\\.git: .+`));
    expect(lines.slice(3)).toEqual(['3 destinations: 0 in sync, 2 drifted, 1 unreachable; queued 2 tasks to repair the drift', '']);
    // Plain verify keeps its meaning: anything not in sync is 1.
    expect(runCli(['verify', '--config', site.config]).status).toBe(1);
  });
});
