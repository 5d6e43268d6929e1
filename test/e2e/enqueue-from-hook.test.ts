import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MISSING_STORE_PATH } from '../../src/config/store-path.js';
import { runCli } from '../support/cli.js';
import { git, gitEnv, initBare, makeWorkTree, writeHook } from '../support/git.js';
import { cliBin } from '../support/paths.js';
import { initStoreSync } from '../support/refrelay-node.js';
import { readWaitingTasks } from '../support/store-files.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();

interface Workspace {
  root: string;
  config: string;
  store: string;
  source: string;
  dest: string;
}

function workspace(): Workspace {
  const root = tempDir('refrelay-e2e');
  const store = join(root, 'store');
  const base = join(root, 'base');
  const dest = join(root, 'dest');
  const source = initBare(join(base, 'team', 'app.git'));
  const config = join(root, 'replication.config');
  writeFileSync(
    config,
    [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  nodeId = node-a',
      '[remote "heads"]',
      `  url = file://${dest}/heads/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/*',
      '[remote "eu.mirror"]',
      `  url = ${dest}/eu/\${name}.git`,
      `  url = ${dest}/eu2/\${name}.git`,
      '  push = refs/tags/*:refs/tags/*',
      '  projects = team/*',
      '[remote "others"]',
      `  url = ${dest}/others/\${name}.git`,
      '  projects = other/*',
      '',
    ].join('\n'),
  );
  initStoreSync(store);
  writeHook(source, 'post-receive', `#!/bin/sh\nexec "${process.execPath}" "${cliBin}" enqueue --stdin --config "${config}"\n`);
  return { root, config, store, source, dest };
}

describe('enqueue from a real post-receive hook', () => {
  it('queues one task per matching destination URL after a real git push, and status shows them', () => {
    const ws = workspace();
    const work = makeWorkTree(join(ws.root, 'work'), 2);
    git(work, ['tag', 'v1']);
    const push = git(work, ['push', '-q', ws.source, 'main', 'v1'], { stdio: ['pipe', 'pipe', 'pipe'] });
    expect(push).toBe('');

    const tasks = readWaitingTasks(ws.store);
    const summary = tasks.map((task) => `${String(task.remote)} ${String(task.uri)} ${JSON.stringify(task.refs)}`).sort();
    expect(summary).toEqual([
      `eu.mirror ${ws.dest}/eu/team/app.git ["refs/tags/v1"]`,
      `eu.mirror ${ws.dest}/eu2/team/app.git ["refs/tags/v1"]`,
      `heads file://${ws.dest}/heads/team/app.git ["refs/heads/main"]`,
    ]);
    for (const task of tasks) expect(task).toMatchObject({ version: 1, project: 'team/app' });
    expect(readdirSync(join(ws.store, 'ref-updates', 'building'))).toEqual([]);

    const status = runCli(['status', '--json', '--config', ws.config]);
    expect(status.stderr).toBe('');
    expect(status.status).toBe(0);
    const json = JSON.parse(status.stdout) as {
      version: number;
      totals: Record<string, number>;
      remotes: Array<{ name: string; waiting: number; uris: Array<{ uri: string; waiting: number; oldestWaitingAgeMs: number }> }>;
    };
    expect(json.version).toBe(1);
    expect(json.totals).toEqual({ waiting: 3, running: 0, failed: 0, corrupt: 0 });
    expect(json.remotes.map((remote) => [remote.name, remote.waiting])).toEqual([
      ['heads', 1],
      ['eu.mirror', 2],
      ['others', 0],
    ]);
    const heads = json.remotes[0]!.uris[0]!;
    expect(heads.uri).toBe(`file://${ws.dest}/heads/team/app.git`);
    expect(heads.oldestWaitingAgeMs).toBeGreaterThanOrEqual(0);
    expect(heads.oldestWaitingAgeMs).toBeLessThan(60_000);
  });

  it('the hook tells the pusher how many tasks it queued', () => {
    const ws = workspace();
    const work = makeWorkTree(join(ws.root, 'work'), 1);
    const push = spawnSync('git', ['push', ws.source, 'main'], { cwd: work, env: gitEnv, encoding: 'utf8' });
    expect(push.status).toBe(0);
    expect(push.stderr).toMatch(/^remote: refrelay: queued 1 task for team\/app\s*$/m);
  });

  it('pushing the same update twice keeps one file with its first timestamp', () => {
    const ws = workspace();
    const first = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--ref', 'refs/heads/main', '--ref', 'refs/tags/v1']);
    expect(first.status).toBe(0);
    expect(first.stdout).toBe('refrelay: queued 3 tasks for team/app\n');
    const again = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--ref', 'refs/tags/v1', '--ref', 'refs/heads/main']);
    expect(again.stdout).toBe('refrelay: queued 3 tasks for team/app (3 already queued)\n');
    expect(readWaitingTasks(ws.store)).toHaveLength(3);
  });

  it('refuses a project name that escapes basePath with exit 2 and writes nothing', () => {
    const ws = workspace();
    for (const project of ['../etc', '-rf', '/abs', 'a/../b', 'bad\u0001name']) {
      const result = runCli(['enqueue', '--config', ws.config, '--project', project, '--ref', 'refs/heads/main']);
      expect(result.status, project).toBe(2);
      expect(result.stderr).toMatch(/^refrelay: invalid project name /);
    }
    expect(readWaitingTasks(ws.store)).toEqual([]);
  });

  it('refuses a --node-id that is no node id (it names files in the store) with exit 2, and writes nothing', () => {
    const ws = workspace();
    for (const command of [
      ['enqueue', '--project', 'team/app', '--ref', 'refs/heads/main'],
      ['daemon', '--drain'],
    ]) {
      const result = runCli([...command, '--config', ws.config, '--node-id', '../../escaped']);
      expect(result.status, command[0]).toBe(2);
      expect(result.stderr).toBe('refrelay: --node-id: expected letters, digits, ".", "_" or "-", starting with a letter or digit, got "../../escaped"\n');
    }
    expect(readWaitingTasks(ws.store)).toEqual([]);
    expect(readdirSync(join(ws.root))).not.toContain('escaped.json');
  });

  it('refuses a malformed ref and malformed hook input with exit 2', () => {
    const ws = workspace();
    const badRef = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--ref', 'refs/heads/a..b']);
    expect(badRef.status).toBe(2);
    expect(badRef.stderr).toBe('refrelay: invalid ref name "refs/heads/a..b": contains ".."\n');
    const badStdin = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--stdin'], { input: 'garbage\n' });
    expect(badStdin.status).toBe(2);
    expect(badStdin.stderr).toBe('refrelay: stdin line 1: expected "<old> <new> <ref>", got "garbage"\n');
    expect(readWaitingTasks(ws.store)).toEqual([]);
  });

  it('refuses a ref name over 4096 bytes, from --ref and from hook stdin, with exit 2 and a short message', () => {
    const ws = workspace();
    const long = `refs/heads/${'x'.repeat(4989)}`;
    const expected = `refrelay: invalid ref name "refs/heads/${'x'.repeat(53)}"… (5000 characters): is 5000 bytes long, over the limit of 4096 bytes (replication.maxRefNameBytes)\n`;
    const fromArgs = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--ref', long]);
    expect(fromArgs.status).toBe(2);
    expect(fromArgs.stderr).toBe(expected);
    const oid = 'a'.repeat(40);
    const fromStdin = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--stdin'], {
      input: `${'0'.repeat(40)} ${oid} refs/heads/main\n${'0'.repeat(40)} ${oid} ${long}\n`,
    });
    expect(fromStdin.status).toBe(2);
    expect(fromStdin.stderr).toBe(expected);
    // Refused as a whole: not even the valid ref of the same hook call is queued.
    expect(readWaitingTasks(ws.store)).toEqual([]);

    const roomier = join(ws.root, 'roomier.config');
    writeFileSync(roomier, `${readFileSync(ws.config, 'utf8').replace('[replication]\n', '[replication]\n  maxRefNameBytes = 5000\n')}`);
    const allowed = runCli(['enqueue', '--config', roomier, '--project', 'team/app', '--ref', long]);
    expect(allowed.stderr).toBe('');
    expect(allowed.status).toBe(0);
  });

  it('queues nothing for a project no remote wants, and says so', () => {
    const ws = workspace();
    initBare(join(ws.root, 'base', 'elsewhere', 'x.git'));
    const result = runCli(['enqueue', '--config', ws.config, '--project', 'elsewhere/x', '--ref', 'refs/tags/v1']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('refrelay: queued 0 tasks for elsewhere/x\n');
    expect(readWaitingTasks(ws.store)).toEqual([]);
  });

  it('refuses with exit 2 a project whose repository is not under basePath, naming the path, before the store or the spool is touched', () => {
    const ws = workspace();
    const missing = join(ws.root, 'base', 'nosuch.git');
    const result = runCli(['enqueue', '--config', ws.config, '--project', 'nosuch', '--ref', 'refs/heads/main']);
    expect(result.stderr).toBe(`refrelay: enqueue: project "nosuch" has no repository: ${missing} does not exist (replication.basePath); nothing queued\n`);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(readWaitingTasks(ws.store)).toEqual([]);

    // The store not mounted: the update would be spooled, but there is no repository to push from.
    const spool = join(ws.root, 'spool');
    const unmounted = join(ws.root, 'unmounted.config');
    writeFileSync(unmounted, readFileSync(ws.config, 'utf8').replace(`storePath = ${ws.store}`, `storePath = ${join(ws.root, 'mnt')}\n  spoolPath = ${spool}`));
    const unspooled = runCli(['enqueue', '--config', unmounted, '--project', 'nosuch', '--ref', 'refs/heads/main']);
    expect(unspooled.stderr).toBe(`refrelay: enqueue: project "nosuch" has no repository: ${missing} does not exist (replication.basePath); nothing queued\n`);
    expect(unspooled.status).toBe(2);
    expect(existsSync(spool)).toBe(false);

    // Without basePath refrelay cannot know where the repository is, and queues as asked.
    const noBase = join(ws.root, 'no-base.config');
    writeFileSync(noBase, readFileSync(ws.config, 'utf8').replace(/^ {2}basePath = .*\n/m, ''));
    expect(runCli(['enqueue', '--config', noBase, '--project', 'nosuch', '--ref', 'refs/heads/main']).stdout).toBe('refrelay: queued 1 task for nosuch\n');
  });

  it('refuses with exit 2 a project whose name is too long for the file system (ENAMETOOLONG), as any missing repository', () => {
    const ws = workspace();
    const project = 'a'.repeat(4096);
    const missing = join(ws.root, 'base', `${project}.git`);
    const result = runCli(['enqueue', '--config', ws.config, '--project', project, '--ref', 'refs/heads/main']);
    expect(result.stderr).toBe(`refrelay: enqueue: project "${project}" has no repository: ${missing} does not exist (replication.basePath); nothing queued\n`);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(readWaitingTasks(ws.store)).toEqual([]);
  });

  it('fails with exit 1 and a clear message when the store is damaged (a mistake to fix, not spooled: see enqueue-spool.test.ts)', () => {
    const ws = workspace();
    // Not an outage a spool bridges: someone must look at the store, nothing may claim success.
    writeFileSync(join(ws.store, 'refrelay-store.json'), 'garbage');
    const result = runCli(['enqueue', '--config', ws.config, '--project', 'team/app', '--ref', 'refs/heads/main']);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`refrelay: the store marker ${join(ws.store, 'refrelay-store.json')} is damaged: expected {"format":2,"storeId":…}\n`);
    expect(result.stdout).toBe('');
    expect(readWaitingTasks(ws.store)).toEqual([]);
  });

  it('reports an invalid configuration with exit 3 and every problem', () => {
    const ws = workspace();
    writeFileSync(ws.config, '[replication]\n  storPath = /tmp/x\n[remote "a"]\n  url = /dest/${name}.git\n  threads = many\n');
    const result = runCli(['enqueue', '--config', ws.config, '--project', 'p', '--ref', 'refs/heads/main']);
    expect(result.status).toBe(3);
    expect(result.stderr.trim().split('\n')).toEqual([
      `${ws.config}: replication.storpath: unknown key (did you mean "storePath"?)`,
      `${ws.config}: replication.storePath: ${MISSING_STORE_PATH}`,
      `${ws.config}: remote.a.threads: expected a whole number ≥ 1, got "many"`,
    ]);
  });
});
