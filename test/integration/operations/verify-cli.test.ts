import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree } from '../../support/git.js';
import { writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('refrelay verify: what an operator reads', () => {
  it('extra refs are drift on a mirror remote only; without mirror they are reported once, in the same words, and never fail verify', () => {
    const root = tempDir('refrelay-verify-extra');
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', initBare(join(root, 'base', 'app.git')), 'main']);
    const mirrorDest = initBare(join(root, 'mirror', 'app.git'));
    const plainDest = initBare(join(root, 'plain', 'app.git'));
    for (const dest of [mirrorDest, plainDest]) git(work, ['push', '-q', dest, 'main', 'main:refs/heads/wip/experiment']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]', `  storePath = ${join(root, 'store')}`, `  basePath = ${join(root, 'base')}`,
      '[remote "mirror"]', `  url = ${join(root, 'mirror')}/\${name}.git`, '  mirror = true',
      '[remote "plain"]', `  url = ${join(root, 'plain')}/\${name}.git`,
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
      '[replication]', `  storePath = ${join(root, 'store')}`, `  basePath = ${base}`,
      '[remote "dr"]', `  url = ${join(root, 'dr')}/\${name}.git`,
    ]);
    const where = `(projects are the <name>.git repositories under ${base}, replication.basePath in ${config})`;

    expect(runCli(['verify', 'nosuch', '--config', config])).toMatchObject({ status: 2, stdout: '', stderr: `refrelay: verify: no project "nosuch" ${where}\n` });
    // One pattern that matches does not hide one that does not.
    expect(runCli(['verify', 'app', 'team/*', '^x.*', '--config', config])).toMatchObject({
      status: 2,
      stdout: '',
      stderr: `refrelay: verify: "team/*" matched no project; "^x.*" matched no project ${where}\n`,
    });
  });
});
