import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree } from '../../support/git.js';
import { RefrelayNode, writeConfig, type LogLine } from '../../support/refrelay-node.js';
import { waitUntil } from '../../support/store-files.js';
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
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '  verifyInterval = 1s',
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
    ]);
    const nodes = [RefrelayNode.start({ config, nodeId: 'n1' }), RefrelayNode.start({ config, nodeId: 'n2' })];
    const verifyRuns = (): LogLine[] => nodes.flatMap((node) => node.logs().filter((line) => line.msg === 'periodic verify finished'));
    try {
      await waitUntil('two periodic verify runs in the cluster', () => verifyRuns().length >= 2, 30_000, 50);
    } finally {
      for (const node of nodes) node.signal('SIGTERM');
      for (const node of nodes) await node.exited;
    }
    const runs = verifyRuns();
    // One run per interval (1 s) for the whole cluster, not one per node: a run is due only when
    // the last one, by whichever node, finished an interval ago (one machine, so the log times
    // are one clock; 100 ms for the measured store clock offset).
    const finishedAt = runs.map((run) => Date.parse(String(run.time))).sort((a, b) => a - b);
    for (let i = 1; i < finishedAt.length; i++)
      expect(finishedAt[i]! - finishedAt[i - 1]!, `runs finished at ${JSON.stringify(runs.map((run) => [run.node, run.time]))}`).toBeGreaterThanOrEqual(900);
    for (const run of runs) expect(run).toMatchObject({ destinations: 2, drifted: 1, unreachable: 0 });

    const status = JSON.parse(runCli(['status', '--json', '--config', config]).stdout) as {
      verify: { drifted: number; problems: Array<{ uri: string; missing: number; different: number }> };
    };
    expect(status.verify).toMatchObject({ drifted: 1, problems: [{ uri: join(root, 'dr', 'drifted.git'), missing: 0, different: 1 }] });
    const table = runCli(['status', '--config', config]).stdout;
    expect(table).toMatch(/verify: 2 destinations checked \S+ ago by n[12]: 1 drifted, 0 unreachable/);
    expect(table).toContain(`DRIFT dr ${join(root, 'dr', 'drifted.git')}: 0 missing, 1 different, 0 extra`);
  });
});
