import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('periodic verify (replication.verifyInterval)', () => {
  it('runs on one node at a time and publishes the drift in status', async () => {
    const root = tempDir('refrelay-periodic-verify');
    const work = makeWorkTree(join(root, 'work'), 2);
    for (const project of ['ok', 'drifted']) {
      git(work, ['push', '-q', initBare(join(root, 'base', `${project}.git`)), 'main']);
      git(work, ['push', '-q', initBare(join(root, 'dr', `${project}.git`)), 'main']);
    }
    // Kept by a remote without mirror: not drift, so not counted as extra in the DRIFT line.
    git(work, ['push', '-q', join(root, 'dr', 'drifted.git'), 'main:refs/heads/wip']);
    git(work, ['commit', '-q', '--allow-empty', '-m', 'only on the master']);
    git(work, ['push', '-q', join(root, 'base', 'drifted.git'), 'main']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]', `  storePath = ${join(root, 'store')}`, `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms', '  randomDelay = 100ms', '  verifyInterval = 1s',
      '[remote "dr"]', `  url = ${join(root, 'dr')}/\${name}.git`,
    ]);
    const nodes = [RefrelayNode.start({ config, nodeId: 'n1' }), RefrelayNode.start({ config, nodeId: 'n2' })];
    try {
      await new Promise((resolve) => setTimeout(resolve, 4000));
    } finally {
      for (const node of nodes) node.signal('SIGTERM');
      for (const node of nodes) await node.exited;
    }
    const runs = nodes.flatMap((node) => node.logs().filter((line) => line.msg === 'periodic verify finished'));
    expect(runs.length).toBeGreaterThanOrEqual(2);
    // One run per interval for the whole cluster, not one per node.
    expect(runs.length).toBeLessThanOrEqual(5);
    for (const run of runs) expect(run).toMatchObject({ destinations: 2, drifted: 1, unreachable: 0 });

    const status = JSON.parse(runCli(['status', '--json', '--config', config]).stdout) as { verify: { drifted: number; problems: Array<{ uri: string; missing: number; different: number }> } };
    expect(status.verify).toMatchObject({ drifted: 1, problems: [{ uri: join(root, 'dr', 'drifted.git'), missing: 0, different: 1 }] });
    const table = runCli(['status', '--config', config]).stdout;
    expect(table).toMatch(/verify: 2 destinations checked \S+ ago by n[12]: 1 drifted, 0 unreachable/);
    expect(table).toContain(`DRIFT dr ${join(root, 'dr', 'drifted.git')}: 0 missing, 1 different, 0 extra`);
  });
});
