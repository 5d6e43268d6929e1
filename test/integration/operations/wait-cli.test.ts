import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../../support/cli.js';
import { freePort } from '../../support/free-port.js';
import { startGitDaemon } from '../../support/git-daemon.js';
import { appSource, commitFile, git, initBare, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

function startNode(config: string, nodeId: string): RefrelayNode {
  const node = RefrelayNode.start({ config, nodeId });
  stops.push(() => node.stop());
  return node;
}

function siteConfig(root: string, base: string, remotes: string[]): string {
  return writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    '  httpListen = off',
    ...remotes.flatMap((line) => (line.startsWith('[remote ') ? [line, '  replicationDelay = 0'] : [line])),
  ]);
}

describe('refrelay wait', () => {
  it('on a healthy cluster of two nodes: exits 0 once the file:// and git:// destinations hold the pushed commit', async () => {
    const root = tempDir('refrelay-wait-ok');
    const { base, source, work } = appSource(root);
    const daemon = await startGitDaemon(join(root, 'served'));
    stops.push(() => daemon.stop());
    initBare(join(root, 'served', 'app.git'));
    const config = siteConfig(root, base, [
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
      '[remote "ci"]',
      `  url = ${daemon.url('${name}.git')}`,
    ]);
    startNode(config, 'n1');
    startNode(config, 'n2');
    const value = commitFile(work, 'next.txt', 'next\n');
    git(work, ['push', '-q', source, 'main']);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);

    const started = Date.now();
    const result = await startCli(['wait', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--timeout', '60s']).done;

    expect(result.stderr).not.toContain('refrelay:');
    expect(result.status).toBe(0);
    // The replication bound here: a pass (200 ms) and its jitter (100 ms), the two pushes, and the
    // store read a second that sees them done; 20 s leaves room for a loaded machine, not for a poll of minutes.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.stdout).toMatch(new RegExp(`^REPLICATED +dr +${join(root, 'dr')}/app\\.git +has refs/heads/main$`, 'm'));
    expect(result.stdout).toMatch(new RegExp(`^REPLICATED +ci +git://127\\.0\\.0\\.1:${daemon.port}/app\\.git +has refs/heads/main$`, 'm'));
    expect(result.stdout).toContain(`wait: refs/heads/main of app at ${value.slice(0, 12)} is on all 2 destinations`);
    expect(refsOf(join(root, 'dr', 'app.git')).get('refs/heads/main')).toBe(value);
    expect(refsOf(join(root, 'served', 'app.git')).get('refs/heads/main')).toBe(value);
  });

  it('with a destination down: exits 1 at the timeout, naming it with its last error; the healthy one is replicated', async () => {
    const root = tempDir('refrelay-wait-down');
    const { base } = appSource(root);
    const deadPort = await freePort();
    const config = siteConfig(root, base, [
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
      '[remote "down"]',
      `  url = git://127.0.0.1:${deadPort}/\${name}.git`,
      '  replicationRetry = 10m',
    ]);
    const node = startNode(config, 'n1');
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    await node.waitForLog((line) => line.msg === 'push failed' && String(line.uri).includes(`:${deadPort}/`));

    const result = await startCli(['wait', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--timeout', '3s', '--json']).done;

    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout) as { result: string; destinations: { remote: string; state: string; detail: string }[] };
    expect(report.result).toBe('lagging');
    expect(report.destinations.map(({ remote, state }) => [remote, state])).toEqual([
      ['dr', 'replicated'],
      ['down', 'backing-off'],
    ]);
    expect(report.destinations[1]!.detail).toMatch(/^1 task waiting, backing off after attempt 1, next attempt in \d+m\d\ds: .*Connection refused/);
  });

  it('--value of a commit not pushed yet: reports the destination lagging, then exits 0 once the commit reaches it', async () => {
    const root = tempDir('refrelay-wait-value');
    const { base, source, work } = appSource(root);
    const config = siteConfig(root, base, ['[remote "dr"]', `  url = ${join(root, 'dr')}/\${name}.git`]);
    const node = startNode(config, 'n1');
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    await node.waitForLog((line) => line.msg === 'pushed');
    const value = commitFile(work, 'later.txt', 'later\n');

    const waiting = startCli(['wait', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--value', value, '--timeout', '60s']);
    await waiting.waitForStderr(`wait: dr ${join(root, 'dr')}/app.git: lagging (has refs/heads/main at `);
    git(work, ['push', '-q', source, 'main']);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    const result = await waiting.done;

    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`wait: refs/heads/main of app at ${value.slice(0, 12)} is on the destination`);
    expect(refsOf(join(root, 'dr', 'app.git')).get('refs/heads/main')).toBe(value);
  });

  it('a destination with no work left that cannot be reached: exits 4 at once, naming it and why', async () => {
    const root = tempDir('refrelay-wait-unreachable');
    const { base } = appSource(root);
    const deadPort = await freePort();
    const config = siteConfig(root, base, ['[remote "down"]', `  url = git://127.0.0.1:${deadPort}/\${name}.git`]);

    const started = Date.now();
    const result = runCli(['wait', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--timeout', '10m']);

    expect(result.status).toBe(4);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.stdout).toMatch(
      new RegExp(
        `^UNREACHABLE +down +git://127\\.0\\.0\\.1:${deadPort}/app\\.git +cannot be reached to confirm: .*(Connection refused|unable to connect)`,
        'm',
      ),
    );
    expect(result.stdout).toMatch(/: 1 destination could not be reached to confirm \(\d+s\)\n$/);
  });

  it('refuses bad input with exit 2 and a precise message, before touching anything', () => {
    const root = tempDir('refrelay-wait-usage');
    const { base } = appSource(root);
    const config = siteConfig(root, base, ['[remote "dr"]', `  url = ${join(root, 'dr')}/\${name}.git`]);
    const wait = (...args: string[]) => runCli(['wait', '--config', config, ...args]);
    expect(wait('--project', 'app', '--ref', 'main')).toMatchObject({ status: 2, stderr: expect.stringContaining('wait: ref "main" ') });
    expect(wait('--project', 'app', '--ref', 'refs/heads/main', '--remote', 'nope')).toMatchObject({
      status: 2,
      stderr: `refrelay: wait: no remote named "nope" in ${config}\n`,
    });
    expect(wait('--project', 'app', '--ref', 'refs/heads/main', '--value', 'abc123')).toMatchObject({
      status: 2,
      stderr: 'refrelay: wait: --value "abc123" is not a full object id (40 or 64 hex digits)\n',
    });
    expect(wait('--project', 'app', '--ref', 'refs/heads/none')).toMatchObject({
      status: 2,
      stderr: `refrelay: wait: ${join(base, 'app.git')} has no refs/heads/none: name the value to wait for with --value\n`,
    });
    expect(wait('--project', 'app', '--ref', 'refs/heads/main', '--timeout', 'soon')).toMatchObject({ status: 2 });
    expect(wait('--project', 'nosuch', '--ref', 'refs/heads/main')).toEqual({
      status: 2,
      stdout: '',
      stderr: `refrelay: wait: project "nosuch" has no repository: ${join(base, 'nosuch.git')} does not exist (replication.basePath)\n`,
    });
  });
});
