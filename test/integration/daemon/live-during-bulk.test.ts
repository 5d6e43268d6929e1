import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { commitFile, git, initBare, makeWorkTree } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

const PROJECTS = 2000;
const DEVS = ['dev0', 'dev1', 'dev2', 'dev3', 'dev4'];
const REPLICATION_DELAY_MS = 1000;
const DISTRIBUTION_INTERVAL_MS = 1000;
const RANDOM_DELAY_MS = 500;

/** A bare repository without the sample hooks, so thousands of copies stay cheap. */
function template(path: string, work?: string): string {
  initBare(path);
  rmSync(join(path, 'hooks'), { recursive: true, force: true });
  mkdirSync(join(path, 'hooks'));
  if (work !== undefined) git(work, ['push', '-q', path, 'main']);
  return path;
}

function destinationHead(path: string): string | undefined {
  try {
    return git(path, ['rev-parse', '--verify', '-q', 'refs/heads/main']).trim();
  } catch {
    return undefined;
  }
}

describe('live updates during a replicate-all', () => {
  it(`delivers a developer's push within replicationDelay + distributionInterval + randomDelay + 3 s while ${PROJECTS} full syncs run, and bulk keeps ≥ 20% of the pushes`, async () => {
    const root = tempDir('refrelay-live-bulk');
    const base = join(root, 'base');
    const mirror = join(root, 'mirror');
    const work = makeWorkTree(join(root, 'work'), 2);
    const source = template(join(root, 'tpl-source.git'), work);
    const empty = template(join(root, 'tpl-empty.git'));
    for (let i = 0; i < PROJECTS; i++) {
      const project = i < DEVS.length ? DEVS[i]! : `p${String(i).padStart(4, '0')}`;
      cpSync(source, join(base, `${project}.git`), { recursive: true });
      cpSync(empty, join(mirror, `${project}.git`), { recursive: true });
    }
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      `  distributionInterval = ${DISTRIBUTION_INTERVAL_MS}ms`,
      `  randomDelay = ${RANDOM_DELAY_MS}ms`,
      '  maxPushes = 4',
      '  httpListen = off',
      '[remote "mirror"]',
      `  url = file://${mirror}/\${name}.git`,
      `  replicationDelay = ${REPLICATION_DELAY_MS}ms`,
      '  threads = 4',
    ]);
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      const queued = runCli(['replicate', '--all', '--config', config]);
      expect(queued.status, queued.stderr).toBe(0);
      expect(queued.stdout).toContain(`queued full sync of ${PROJECTS} projects`);
      await node.waitForLog((line) => line.msg === 'pushed', 30_000);

      const budgetMs = REPLICATION_DELAY_MS + DISTRIBUTION_INTERVAL_MS + RANDOM_DELAY_MS + 3000;
      const lags: number[] = [];
      const windowStart = Date.now();
      for (let update = 0; update < 8; update++) {
        const dev = DEVS[update % DEVS.length]!;
        const devWork = join(root, `work-${dev}`);
        if (update < DEVS.length) git(root, ['clone', '-q', join(base, `${dev}.git`), devWork]);
        const sha = commitFile(devWork, `live-${update}.txt`, `update ${update}\n`);
        git(devWork, ['push', '-q', 'origin', 'HEAD:refs/heads/main']);
        const enqueuedAt = Date.now();
        const enqueued = runCli(['enqueue', '--project', dev, '--ref', 'refs/heads/main', '--config', config]);
        expect(enqueued.status, enqueued.stderr).toBe(0);
        while (destinationHead(join(mirror, `${dev}.git`)) !== sha) {
          if (Date.now() - enqueuedAt > 30_000) throw new Error(`live update ${update} of ${dev} not delivered within 30 s`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        lags.push(Date.now() - enqueuedAt);
      }
      const windowEnd = Date.now();
      for (const [update, lag] of lags.entries()) expect(lag, `live update ${update}: ${lags.join(', ')} ms`).toBeLessThanOrEqual(budgetMs);

      const pushes = node
        .logs()
        .filter((line) => line.msg === 'pushed' && Date.parse(String(line.time)) >= windowStart && Date.parse(String(line.time)) <= windowEnd);
      const bulk = pushes.filter((line) => !DEVS.includes(String(line.project)));
      expect(pushes.length).toBeGreaterThan(20);
      expect(bulk.length / pushes.length).toBeGreaterThanOrEqual(0.2);
      // The replicate-all was still running: the live pushes did not wait for it to finish.
      expect(node.logs().filter((line) => line.msg === 'pushed').length).toBeLessThan(PROJECTS);
      expect(node.problems()).toEqual([]);
    } finally {
      node.signal('SIGTERM');
      await node.exited;
    }
  }, 240_000);
});
