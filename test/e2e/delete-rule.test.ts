import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { appSource, git, refsOf } from '../support/git.js';
import { RefrelayNode, writeConfig } from '../support/refrelay-node.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function drain(config: string): Promise<void> {
  const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true });
  stops.push(() => node.stop());
  expect(await node.exited).toEqual({ code: 0, signal: null });
  expect(node.problems()).toEqual([]);
}

const branches = (repo: string): string[] => [...refsOf(repo, 'refs/heads/').keys()];

describe('when a branch deleted on the master is deleted at a destination', () => {
  it('as config check words it: with a forced refspec or mirror, not with neither; mirror alone deletes in a full sync', async () => {
    const root = tempDir('refrelay-delete-rule');
    const { store, base, source } = appSource(root);
    const dest = (remote: string): string => join(root, remote, 'app.git');
    const remote = (name: string, push: string, mirror: boolean): string[] => [
      `[remote "${name}"]`,
      `  url = file://${root}/${name}/\${name}.git`,
      `  push = ${push}`,
      `  mirror = ${mirror}`,
      '  replicationDelay = 0',
    ];
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '  httpListen = off',
      ...remote('forced', '+refs/heads/*:refs/heads/*', false),
      ...remote('plain', 'refs/heads/*:refs/heads/*', false),
      ...remote('mirror', 'refs/heads/*:refs/heads/*', true),
    ]);
    const check = runCli(['config', 'check', '--config', config]);
    expect(check.status).toBe(0);
    expect(check.stdout.split('\n').filter((line) => /^remote |^ {2}deletes: /.test(line))).toEqual([
      'remote "forced"',
      '  deletes: pushed (forced refspec +refs/heads/*:refs/heads/*)',
      'remote "plain"',
      '  deletes: not pushed (no forced refspec, mirror off)',
      'remote "mirror"',
      '  deletes: pushed (mirror); a full sync also deletes destination refs that no local ref maps to',
    ]);

    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--ref', 'refs/heads/feature']).status).toBe(0);
    await drain(config);
    for (const name of ['forced', 'plain', 'mirror']) expect([name, branches(dest(name))]).toEqual([name, ['refs/heads/feature', 'refs/heads/main']]);

    git(source, ['update-ref', '-d', 'refs/heads/feature']);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/feature']).status).toBe(0);
    await drain(config);
    expect(branches(dest('forced'))).toEqual(['refs/heads/main']);
    expect(branches(dest('plain'))).toEqual(['refs/heads/feature', 'refs/heads/main']);
    expect(branches(dest('mirror'))).toEqual(['refs/heads/main']);

    // A branch only the destinations have: no task names it, so only a mirror's full sync deletes it.
    const main = refsOf(source).get('refs/heads/main') ?? '';
    for (const name of ['forced', 'mirror']) git(dest(name), ['update-ref', 'refs/heads/stray', main]);
    expect(runCli(['replicate', '--config', config, '--now', 'app']).status).toBe(0);
    await drain(config);
    expect(branches(dest('forced'))).toEqual(['refs/heads/main', 'refs/heads/stray']);
    expect(branches(dest('mirror'))).toEqual(['refs/heads/main']);
  });
});
