import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { taskKey, uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { appSource, git, initBare, writeHook } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

const DECLINED = 'rejected by the destination: [remote rejected] (pre-receive hook declined)';

interface Setup {
  root: string;
  store: string;
  source: string;
  config: string;
  /** The destination's repository, and its URL as tasks carry it. */
  dest: string;
}

/**
 * Source `app` with main and feature; a destination `dr` whose pre-receive hook refuses any push
 * that carries refs/heads/blocked (and takes everything else), as a policy on a real server would.
 */
function setup(label: string, replication: string[] = []): Setup {
  const root = tempDir(label);
  const { store, base, source } = appSource(root);
  git(source, ['update-ref', 'refs/heads/blocked', 'refs/heads/main']);
  const dest = initBare(join(root, 'dr', 'app.git'));
  writeHook(dest, 'pre-receive', '#!/bin/sh\nwhile read old new ref; do [ "$ref" = refs/heads/blocked ] && exit 1; done\nexit 0\n');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 0',
    ...replication.map((line) => `  ${line}`),
    '[remote "dr"]',
    `  url = ${join(root, 'dr')}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  return { root, store, source, config, dest };
}

function enqueue(s: Setup, refs: string[]): void {
  const result = runCli(['enqueue', '--config', s.config, '--project', 'app', ...refs.flatMap((ref) => ['--ref', ref])]);
  expect(result).toMatchObject({ status: 0, stderr: '' });
}

async function drain(s: Setup): Promise<{ node: RefrelayNode; code: number | null }> {
  const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
  nodes.push(node);
  const { code } = await node.exited;
  return { node, code };
}

/** The one-ref task the drain parked for refs/heads/blocked: its key and its reason record. */
function parkedBlocked(s: Setup): { key: string; reason: { at: number; reason: string } } {
  const key = taskKey({ project: 'app', refs: ['refs/heads/blocked'], uri: s.dest, remote: 'dr' });
  const reason = JSON.parse(readFileSync(storeDir(s.store, 'failed', uriKey(s.dest), `${key}.json.reason.json`), 'utf8')) as { at: number; reason: string };
  return { key, reason };
}

function since(at: number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

describe('what an operator sees of a ref the destination refuses', () => {
  it("logs the parked ref at warn with git's reason, and daemon --drain says what it parked and why before it exits 1", async () => {
    const s = setup('refrelay-failed-drain');
    enqueue(s, ['refs/heads/main', 'refs/heads/blocked']);

    const { node, code } = await drain(s);
    expect(code).toBe(1);
    expect(node.logs().filter((line) => line.msg === 'ref parked in failed/').map(({ level, project, ref, remote, uri, reason }) => ({ level, project, ref, remote, uri, reason }))).toEqual([
      { level: 40, project: 'app', ref: 'refs/heads/blocked', remote: 'dr', uri: s.dest, reason: DECLINED },
    ]);
    expect(node.stderr).toBe(
      'refrelay: 1 task moved to failed/ during this run:\n' +
        `  ${s.dest} refs/heads/blocked: ${DECLINED}\n` +
        'refrelay: see them with `refrelay failed list`; put them back with `refrelay retry`, or drop them with `refrelay failed drop`\n',
    );
    expect(git(s.dest, ['rev-parse', 'refs/heads/main']).trim()).toBe(git(s.source, ['rev-parse', 'refs/heads/main']).trim());

    // status names the task and the reason, not only a count.
    const status = runCli(['status', '--config', s.config]);
    expect(status.status).toBe(0);
    const rows = status.stdout.split('\n');
    const header = rows.findIndex((row) => row.startsWith('FAILED URI'));
    expect(rows[header]).toMatch(/^FAILED URI\s+REMOTE\s+PROJECT\s+REFS\s+FAILED\s+REASON$/);
    expect(rows[header + 1]!.split(/\s{2,}/)).toEqual([s.dest, 'dr', 'app', 'refs/heads/blocked', expect.stringMatching(/^\d+s ago$/), DECLINED]);
    expect(rows[header + 2]).toBe('');
    const json = JSON.parse(runCli(['status', '--json', '--config', s.config]).stdout) as { failed: unknown[] };
    const { key, reason } = parkedBlocked(s);
    expect(json.failed).toEqual([expect.objectContaining({ taskKey: key, uri: s.dest, remote: 'dr', project: 'app', refs: ['refs/heads/blocked'], reason: DECLINED, failedAt: reason.at })]);
  });
});
