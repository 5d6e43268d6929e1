import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** Writes a fan-out file the way configuration tools do: a temp name git ignores, then a rename. */
function putRemoteFile(dir: string, name: string, lines: string[]): string {
  const path = join(dir, `${name}.config`);
  writeFileSync(`${path}.tmp`, `${lines.join('\n')}\n`);
  renameSync(`${path}.tmp`, path);
  return path;
}

/** The refs of a destination, empty while the daemon has not created it (or is creating it). */
function destinationRefs(repo: string): Map<string, string> {
  try {
    return refsOf(repo);
  } catch {
    return new Map();
  }
}

describe('autoReload with a fan-out folder', () => {
  it('a running daemon picks up an added, a removed and an edited file of replication/', async () => {
    const root = tempDir('refrelay-fanout-reload');
    const source = initBare(join(root, 'base', 'app.git'));
    git(makeWorkTree(join(root, 'work'), 1), ['push', '-q', source, 'main']);
    const dir = join(root, 'replication');
    mkdirSync(dir);
    const config = writeConfig(join(root, 'replication.config'), [
      '[gerrit]',
      '  autoReload = true',
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 0',
      '  httpListen = off',
    ]);
    const first = putRemoteFile(dir, 'first', ['[remote]', `  url = file://${root}/first/\${name}.git`, '  replicationDelay = 0']);
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    stops.push(() => node.stop());

    // Delivered under the config the daemon started with: its loop runs, the stamp is taken.
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).stdout).toBe('refrelay: queued 1 task for app\n');
    await node.waitForLog((line) => line.msg === 'pushed' && line.remote === 'first');

    const second = putRemoteFile(dir, 'second', ['[remote]', `  url = file://${root}/second/\${name}.git`, '  replicationDelay = 0']);
    const added = await node.waitForLog((line) => line.msg === 'config reloaded' && (line.added as string[]).includes('second'));
    expect(added).toMatchObject({ reason: 'config file changed', files: [second], added: ['second'], removed: [] });
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--remote', 'second']).status).toBe(0);
    await waitUntil(
      'the push to the new remote',
      () => destinationRefs(join(root, 'second', 'app.git')).get('refs/heads/main') === refsOf(source).get('refs/heads/main'),
    );

    rmSync(first);
    expect(await node.waitForLog((line) => line.msg === 'config reloaded' && (line.removed as string[]).length > 0)).toMatchObject({
      files: [first],
      added: [],
      removed: ['first'],
    });

    putRemoteFile(dir, 'second', [
      '[remote]',
      `  url = file://${root}/second/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/mirror/*',
      '  replicationDelay = 0',
    ]);
    await node.waitForLog((line) => line.msg === 'config reloaded' && (line.files as string[]).includes(second) && (line.added as string[]).length === 0);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).stdout).toBe('refrelay: queued 1 task for app\n');
    await waitUntil('the push with the edited refspec', () => destinationRefs(join(root, 'second', 'app.git')).has('refs/heads/mirror/main'));

    node.signal('SIGTERM');
    expect((await node.exited).code).toBe(0);
    expect(node.problems()).toEqual([]);
  });
});
