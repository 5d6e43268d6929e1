import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { readJson, RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { waitingTaskPaths } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

interface TaskFile {
  project: string;
  refs: string[];
  uri: string;
  remote: string;
}

function waitingTasks(store: string): TaskFile[] {
  return waitingTaskPaths(store)
    .map((path) => readJson<TaskFile>(path))
    .map(({ project, refs, uri, remote }) => ({ project, refs, uri, remote }))
    .sort((a, b) => `${a.remote} ${a.project}`.localeCompare(`${b.remote} ${b.project}`));
}

// Each pattern below means something else as a JavaScript RegExp: (?i) is a syntax error there,
// \Q is a plain Q, \w is fine but [a-z&&[^x]] is a class of a-z, &, [, ^, x.
describe('projects and excludedRefsPattern written for Gerrit', () => {
  it('route updates and keep refs back as Java reads them', async () => {
    const root = tempDir('refrelay-java-regex');
    const base = join(root, 'base');
    const store = join(root, 'store');
    const source = initBare(join(base, 'Team', 'app.git'));
    initBare(join(base, 'lib', 'tax.git'));
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', source, 'main', 'main:refs/heads/wip.1', 'main:refs/heads/wipx']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "ci"]',
      `  url = ${join(root, 'ci')}/\${name}.git`,
      '  projects = ^(?i)team/.*',
      '  excludedRefsPattern = refs/heads/\\\\Qwip.\\\\E.*',
      '  replicationDelay = 0',
      '[remote "words"]',
      `  url = ${join(root, 'words')}/\${name}.git`,
      '  projects = ^\\\\w+/[a-z&&[^x]]+',
      '  replicationDelay = 0',
    ]);

    const refs = ['refs/heads/main', 'refs/heads/wip.1', 'refs/heads/wipx'];
    const enqueued = runCli(['enqueue', '--config', config, '--project', 'Team/app', ...refs.flatMap((ref) => ['--ref', ref])]);
    expect(enqueued.stderr).toBe('');
    expect(enqueued.stdout).toBe('refrelay: queued 2 tasks for Team/app\n');
    expect(runCli(['enqueue', '--config', config, '--project', 'lib/tax', '--ref', 'refs/heads/main']).stdout).toBe('refrelay: queued 0 tasks for lib/tax\n');
    expect(waitingTasks(store)).toEqual([
      { project: 'Team/app', refs: ['refs/heads/main', 'refs/heads/wipx'], uri: join(root, 'ci', 'Team', 'app.git'), remote: 'ci' },
      { project: 'Team/app', refs, uri: join(root, 'words', 'Team', 'app.git'), remote: 'words' },
    ]);

    const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true });
    stops.push(() => node.stop());
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);
    const local = refsOf(source);
    expect(refsOf(join(root, 'ci', 'Team', 'app.git'))).toEqual(new Map([...local].filter(([ref]) => ref !== 'refs/heads/wip.1')));
    expect(refsOf(join(root, 'words', 'Team', 'app.git'))).toEqual(local);
  });
});
