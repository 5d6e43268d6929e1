import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../src/store/task-store.js';
import { uriKey } from '../../src/task/task-key.js';
import { documentedCommandLines, helpExamples } from '../support/example-lines.js';
import { writeGerritTask } from '../support/gerrit-queue.js';
import { git, gitEnv, initBare, makeWorkTree, refsOf } from '../support/git.js';
import { cliBin, repoRoot } from '../support/paths.js';
import { RefrelayNode, writeConfig } from '../support/refrelay-node.js';
import { namesIn, readWaitingTasks, waitUntil } from '../support/store-files.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/**
 * A master as the examples assume one: `replication.config` in the current folder, the store made,
 * `team/app` under basePath with a main branch, a remote `dr`, and `refrelay` on PATH. The
 * examples' absolute paths stand for folders of the sandbox (`asWritten`).
 */
interface Sandbox {
  readonly root: string;
  readonly config: string;
  readonly store: string;
  readonly repo: string;
  readonly work: string;
  readonly bin: string;
  readonly dr: string;
}

function sandbox(options: { initStore?: boolean; remotes?: (root: string) => string[] } = {}): Sandbox {
  const root = tempDir('refrelay-examples');
  const base = join(root, 'git');
  const repo = initBare(join(base, 'team', 'app.git'));
  const work = makeWorkTree(join(root, 'work'), 1);
  git(work, ['push', '-q', repo, 'main']);
  const store = join(root, 'store');
  const config = writeConfig(
    join(root, 'replication.config'),
    [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${base}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '  httpListen = off',
      '[remote "dr"]',
      `  url = ${root}/dr/\${name}.git`,
      '  replicationDelay = 0',
      ...(options.remotes?.(root) ?? []),
    ],
    { initStore: options.initStore ?? true },
  );
  const bin = join(root, 'bin');
  mkdirSync(bin);
  symlinkSync(cliBin, join(bin, 'refrelay'));
  return { root, config, store, repo, work, bin, dr: join(root, 'dr', 'team', 'app.git') };
}

/** The example's paths, which name an operator's folders, as the sandbox's; nothing else changes. */
function asWritten(s: Sandbox, line: string): string {
  return line
    .replaceAll('/etc/refrelay/replication.config', s.config)
    .replaceAll('/srv/git', join(s.root, 'git'))
    .replaceAll('/var/gerrit', join(s.root, 'gerrit'));
}

function shellEnv(s: Sandbox, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...gitEnv, NO_COLOR: '1', PATH: `${s.bin}:${process.env.PATH ?? ''}`, ...extra };
  if (extra.REFRELAY_CONFIG === undefined) delete env.REFRELAY_CONFIG;
  return env;
}

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the line with `sh -c` in the sandbox, as an operator's shell would. */
function run(s: Sandbox, line: string, options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<Ran> {
  const child = spawn('sh', ['-c', asWritten(s, line)], { cwd: s.root, env: shellEnv(s, options.env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

async function ok(s: Sandbox, line: string): Promise<string> {
  const ran = await run(s, line);
  expect({ line, status: ran.status, stderr: ran.stderr }).toEqual({ line, status: 0, stderr: '' });
  return ran.stdout;
}

/** `hook install` first names the refrelay its hooks will run (and, from a checkout, says they depend on it). */
function afterInstallHeader(stdout: string): string {
  const [first, ...rest] = stdout.split('\n');
  expect(first).toMatch(/^hooks run the refrelay at \/.+\/bin\/refrelay\.js \(node \/.+\)$/);
  return (rest[0]?.startsWith('note: that is not an installed package') ? rest.slice(1) : rest).join('\n');
}

async function drain(s: Sandbox): Promise<void> {
  const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
  stops.push(() => node.stop());
  expect(await node.exited).toEqual({ code: 0, signal: null });
}

function waitingRefs(s: Sandbox): string[] {
  return readWaitingTasks(s.store)
    .flatMap((task) => task.refs as string[])
    .sort();
}

/** Pushes a new branch to the master repository, whose post-receive hook is `hook`. */
function pushThroughHook(s: Sandbox, hook: string, env: NodeJS.ProcessEnv = {}): void {
  writeFileSync(join(s.repo, 'hooks', 'post-receive'), hook, { mode: 0o755 });
  git(s.work, ['push', '-q', s.repo, 'main:refs/heads/topic'], { env: { PATH: `${s.bin}:${process.env.PATH ?? ''}`, ...env } });
}

function gerritQueue(s: Sandbox): void {
  const refUpdates = join(s.root, 'gerrit', 'data', 'replication', 'ref-updates');
  for (const folder of ['building', 'running', 'waiting']) mkdirSync(join(refUpdates, folder), { recursive: true });
  const uri = `${s.root}/dr/team/app.git`;
  writeGerritTask(join(refUpdates, 'waiting'), { project: 'team/app', refs: ['refs/heads/main'], uri, remote: 'dr' });
  writeGerritTask(join(refUpdates, 'running'), { project: 'team/app', refs: ['refs/heads/feature'], uri, remote: 'dr' });
}

/** A URI in backoff after failed pushes, as a node records it. */
function backOff(s: Sandbox, uri: string): void {
  mkdirSync(join(s.store, 'uri-state'), { recursive: true });
  writeFileSync(join(s.store, 'uri-state', `${uriKey(uri)}.json`), JSON.stringify({ uri, attempts: 3, notBefore: Date.now() + 600_000 }));
}

/** A task parked in failed/ the way a rejected ref is: remote dr, its reason as git gave it. */
async function parked(s: Sandbox): Promise<string> {
  const store = new TaskStore({ root: s.store, nodeId: 'node-1' });
  const task = { project: 'team/app', refs: ['refs/heads/blocked'], uri: `${s.root}/dr/team/app.git`, remote: 'dr' };
  await store.parkFailed(task, { reason: 'rejected refs/heads/blocked: pre-receive hook declined' });
  return (await store.listFailed())[0]!.key;
}

function runningNote(s: Sandbox): string {
  return (
    `note: 1 task file in ${s.root}/gerrit/data/replication/ref-updates/running not imported: Gerrit was pushing it when it stopped ` +
    'and puts it back in waiting/ when it starts; once the plugin is stopped on every primary, run this again with --include-running\n'
  );
}

const DAEMON_STOPPED = '"msg":"refrelay node stopped"';

/** What each documented command line is run in, and what it must do there. */
const RUNS: Record<string, (line: string) => Promise<void>> = {
  'refrelay config check --config /etc/refrelay/replication.config': async (line) => {
    const s = sandbox();
    expect((await ok(s, line)).split('\n')[0]).toBe(`config: ${s.config}`);
  },
  'refrelay config check --config replication.config': async (line) => {
    const s = sandbox();
    copyFileSync(join(repoRoot, 'replication.config.example'), s.config);
    expect((await ok(s, line)).split('\n')[0]).toBe(`config: ${s.config}`);
  },
  'refrelay init --config /etc/refrelay/replication.config': async (line) => {
    const s = sandbox({ initStore: false });
    expect(await ok(s, line)).toBe(`created the refrelay store at ${s.store}\n`);
  },
  // Run without `sudo -u refrelay`: the sandbox has no such user (README's systemd section makes one).
  'sudo -u refrelay refrelay init --config /etc/refrelay/replication.config   # once per cluster, store mounted': async (line) => {
    const s = sandbox({ initStore: false });
    expect(await ok(s, line.replace(/^sudo -u refrelay /, ''))).toBe(`created the refrelay store at ${s.store}\n`);
  },
  'refrelay enqueue --project team/app --ref refs/heads/main': async (line) => {
    const s = sandbox();
    expect(await ok(s, line)).toBe('refrelay: queued 1 task for team/app\n');
    expect(waitingRefs(s)).toEqual(['refs/heads/main']);
  },
  // A hook runs with the repository's folder as its working directory: the config comes from REFRELAY_CONFIG.
  'refrelay enqueue --stdin   # in a post-receive hook; project from GIT_DIR': async (line) => {
    const s = sandbox();
    pushThroughHook(s, `#!/bin/sh\n${asWritten(s, line)}\n`, { REFRELAY_CONFIG: s.config });
    expect(waitingRefs(s)).toEqual(['refs/heads/topic']);
  },
  'exec refrelay enqueue --stdin --config /etc/refrelay/replication.config': async (line) => {
    const s = sandbox();
    pushThroughHook(s, `#!/bin/sh\n${asWritten(s, line)}\n`);
    expect(waitingRefs(s)).toEqual(['refs/heads/topic']);
  },
  'refrelay status': async (line) => {
    const s = sandbox();
    expect((await ok(s, line)).split('\n').slice(0, 2)).toEqual([`store ${s.store}`, 'waiting 0  running 0  failed 0  corrupt 0']);
  },
  'refrelay status --config /etc/refrelay/replication.config': async (line) => {
    const s = sandbox();
    await ok(s, 'refrelay enqueue --project team/app --ref refs/heads/main');
    expect((await ok(s, line)).split('\n').slice(0, 2)).toEqual([`store ${s.store}`, 'waiting 1  running 0  failed 0  corrupt 0']);
  },
  'refrelay status --json': async (line) => {
    const s = sandbox();
    expect(JSON.parse(await ok(s, line))).toMatchObject({ version: 1, storePath: s.store, totals: { waiting: 0, running: 0, failed: 0, corrupt: 0 } });
  },
  'refrelay daemon --config /etc/refrelay/replication.config': async (line) => {
    const s = sandbox();
    const daemon = spawn('sh', ['-c', `exec ${asWritten(s, line)}`], { cwd: s.root, env: shellEnv(s), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    daemon.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => daemon.on('exit', (code) => resolve(code)));
    stops.push(async () => {
      daemon.kill('SIGKILL');
      await exited;
    });
    await ok(s, 'refrelay enqueue --project team/app --ref refs/heads/main');
    await waitUntil('main at the destination', () => existsSync(join(s.dr, 'refs', 'heads', 'main')));
    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain(DAEMON_STOPPED);
    expect(refsOf(s.dr)).toEqual(refsOf(s.repo));
  },
  'refrelay daemon --drain   # deliver what is queued, then exit': async (line) => {
    const s = sandbox();
    await ok(s, 'refrelay enqueue --project team/app --ref refs/heads/main');
    expect(await ok(s, line)).toContain(DAEMON_STOPPED);
    expect(refsOf(s.dr)).toEqual(refsOf(s.repo));
  },
  'refrelay hook install --all --dry-run': async (line) => {
    const s = sandbox();
    expect(afterInstallHeader(await ok(s, line))).toBe(`would install: ${s.repo}/hooks/post-receive\ndry run: 1 hook would change, 0 unchanged\n`);
    expect(existsSync(join(s.repo, 'hooks', 'post-receive'))).toBe(false);
  },
  'refrelay hook install --hooks-path /srv/git-hooks --kind reference-transaction': async (line) => {
    const s = sandbox();
    const hook = join(s.root, 'git-hooks', 'reference-transaction');
    expect(afterInstallHeader(await ok(s, line))).toBe(`install: ${hook}\n1 hook changed, 0 unchanged\n`);
    expect(existsSync(hook)).toBe(true);
  },
  'refrelay hook uninstall --repo /srv/git/team/app.git': async (line) => {
    const s = sandbox();
    await ok(s, 'refrelay hook install --repo /srv/git/team/app.git');
    expect(await ok(s, line)).toBe(`remove: ${s.repo}/hooks/post-receive\n1 hook changed, 0 unchanged\n`);
    expect(namesIn(join(s.repo, 'hooks')).filter((name) => name.startsWith('post-receive'))).toEqual([]);
  },
  "refrelay replicate 'team/*' --remote dr": async (line) => {
    const s = sandbox();
    expect(await ok(s, line)).toBe('queued full sync of 1 project to 1 destination URL\n');
    expect(waitingRefs(s)).toEqual(['..all..']);
  },
  'refrelay replicate --all --now --wait': async (line) => {
    const s = sandbox();
    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    stops.push(() => node.stop());
    const out = await ok(s, line);
    expect(out.split('\n')[0]).toBe('queued full sync of 1 project to 1 destination URL');
    expect(out).toMatch(new RegExp(`\\n${s.dr.replaceAll('.', '\\.')} +in sync\\n`));
    expect(refsOf(s.dr)).toEqual(refsOf(s.repo));
  },
  'refrelay verify --remote dr': async (line) => {
    const s = sandbox();
    await ok(s, 'refrelay enqueue --project team/app --ref refs/heads/main');
    await drain(s);
    expect(await ok(s, line)).toBe(`in sync      dr ${s.dr} (1 ref)\n1 destination: 1 in sync, 0 drifted, 0 unreachable\n`);
  },
  'refrelay wait --project team/app --ref refs/heads/main': async (line) => {
    const s = sandbox();
    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    stops.push(() => node.stop());
    await ok(s, 'refrelay enqueue --project team/app --ref refs/heads/main');
    const value = git(s.repo, ['rev-parse', 'refs/heads/main']).trim();
    const ran = await run(s, line);
    expect(ran.status).toBe(0);
    // Outside a terminal, each change of the destination's state while waiting is one line.
    expect(ran.stderr).toMatch(new RegExp(`^(wait: dr ${s.dr.replaceAll('.', '\\.')}: \\S+ \\(.*\\)\\n)*$`));
    expect(ran.stdout).toMatch(
      new RegExp(
        `^REPLICATED  dr  ${s.dr.replaceAll('.', '\\.')}  has refs/heads/main\nwait: refs/heads/main of team/app at ${value.slice(0, 12)} is on the destination \\(\\d+s\\)\n$`,
      ),
    );
  },
  'refrelay wait --project team/app --ref refs/heads/main --value "$GIT_COMMIT" --remote dr --timeout 5m': async (line) => {
    const s = sandbox();
    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    stops.push(() => node.stop());
    await ok(s, 'refrelay enqueue --project team/app --ref refs/heads/main');
    const value = git(s.repo, ['rev-parse', 'refs/heads/main']).trim();
    const ran = await run(s, line, { env: { GIT_COMMIT: value } });
    expect(ran.status).toBe(0);
    expect(ran.stdout).toContain(`wait: refs/heads/main of team/app at ${value.slice(0, 12)} is on the destination`);
    expect(refsOf(s.dr).get('refs/heads/main')).toBe(value);
  },
  'refrelay failed list': async (line) => {
    const s = sandbox();
    const key = await parked(s);
    const [header, row, ...rest] = (await ok(s, line)).split('\n');
    expect(header?.split(/\s{2,}/)).toEqual(['TASK', 'REMOTE', 'URI', 'PROJECT', 'REFS', 'SINCE', 'REASON']);
    expect(row?.split(/\s{2,}/)).toEqual([
      key,
      'dr',
      `${s.root}/dr/team/app.git`,
      'team/app',
      'refs/heads/blocked',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      'rejected refs/heads/blocked: pre-receive hook declined',
    ]);
    expect(rest).toEqual(['']);
  },
  'refrelay failed drop --remote dr --dry-run': async (line) => {
    const s = sandbox();
    const key = await parked(s);
    const [first, , row] = (await ok(s, line)).split('\n');
    expect(first).toBe('would drop 1 failed task:');
    expect(row?.startsWith(`${key}  dr`)).toBe(true);
    expect(await ok(s, 'refrelay failed list')).toContain(key);
  },
  'refrelay failed drop 3f786850e387550fdab836ed7e6dc881de23001b': async (line) => {
    const s = sandbox();
    const key = await parked(s);
    expect(await ok(s, line)).toBe('Nothing to drop\nno failed task 3f786850e387550fdab836ed7e6dc881de23001b\n');
    expect(await ok(s, 'refrelay failed list')).toContain(key);
  },
  'refrelay status --limit 10   # the 10 URIs that waited longest': async (line) => {
    const s = sandbox();
    const store = new TaskStore({ root: s.store, nodeId: 'doc' });
    for (let i = 0; i < 12; i++) await store.create({ project: `team/p${i}`, refs: ['refs/heads/main'], uri: `${s.root}/dr/team/p${i}.git`, remote: 'dr' });
    const lines = (await ok(s, line)).split('\n');
    expect(lines[1]).toBe('waiting 12  running 0  failed 0  corrupt 0');
    const header = lines.findIndex((text) => /^REMOTE\s+URI\s/.test(text));
    const listed = lines.slice(header + 1, lines.indexOf('', header));
    expect(listed).toHaveLength(11);
    expect(listed.slice(0, 10).every((text) => text.startsWith('dr '))).toBe(true);
    expect(listed[10]).toBe('… and 2 more (refrelay status --limit 0 lists every URI)');
  },
  'refrelay status --all   # every URI, and every failed task with its reason': async (line) => {
    const s = sandbox();
    await parked(s);
    const lines = (await ok(s, line)).split('\n');
    expect(lines.slice(0, 2)).toEqual([`store ${s.store}`, 'waiting 0  running 0  failed 1  corrupt 0']);
    const failedRow = lines[lines.findIndex((text) => text.startsWith('FAILED URI')) + 1];
    expect(failedRow?.split(/\s{2,}/)).toEqual([
      `${s.root}/dr/team/app.git`,
      'dr',
      'team/app',
      'refs/heads/blocked',
      expect.stringMatching(/ago$/),
      'rejected refs/heads/blocked: pre-receive hook declined',
    ]);
  },
  'refrelay retry --remote dr': async (line) => {
    const s = sandbox();
    const uri = `${s.root}/dr/team/app.git`;
    backOff(s, uri);
    expect(await ok(s, line)).toBe(`cleared the backoff of 1 URI:\n  ${uri}\n`);
    expect(namesIn(join(s.store, 'uri-state'))).toEqual([]);
  },
  'refrelay retry --uri github.com/example/app': async (line) => {
    const s = sandbox({
      remotes: (root) => ['[remote "github.public"]', `  url = ${root}/github.com/example/\${name}.git`, '  remoteNameStyle = basenameOnly'],
    });
    const uri = `${s.root}/github.com/example/app.git`;
    backOff(s, uri);
    backOff(s, `${s.root}/dr/team/app.git`);
    expect(await ok(s, line)).toBe(`cleared the backoff of 1 URI:\n  ${uri}\n`);
    expect(namesIn(join(s.store, 'uri-state'))).toEqual([`${uriKey(`${s.root}/dr/team/app.git`)}.json`]);
  },
  'refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --dry-run': async (line) => {
    const s = sandbox();
    gerritQueue(s);
    const ran = await run(s, line);
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe('dry run: would import 1 task (0 already queued), skip 0, leave 1 in running/; nothing written\n');
    expect(ran.stderr).toBe(runningNote(s));
    expect(waitingRefs(s)).toEqual([]);
  },
  'refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --remove': async (line) => {
    const s = sandbox();
    gerritQueue(s);
    const ran = await run(s, line);
    expect(ran.status).toBe(0);
    expect(ran.stdout).toBe('imported 1 task (0 already queued), skipped 0, left 1 in running/, removed 1 Gerrit file\n');
    expect(ran.stderr).toBe(runningNote(s));
    expect(waitingRefs(s)).toEqual(['refs/heads/main']);
  },
  'refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --include-running --remove   # plugin stopped everywhere': async (line) => {
    const s = sandbox();
    gerritQueue(s);
    expect(await ok(s, line)).toBe('imported 2 tasks (0 already queued, 1 from running/), skipped 0, removed 2 Gerrit files\n');
    expect(waitingRefs(s)).toEqual(['refs/heads/feature', 'refs/heads/main']);
  },
};

/** Documented lines this file does not run, and why. */
const NOT_RUN: Record<string, string> = {
  'refrelay verify --fix && refrelay daemon --drain':
    'it needs drifted destinations; test/integration/operations/verify-cli.test.ts runs it as written through sh',
};

describe('the command lines of --help, README.md and replication.config.example', () => {
  it('are each run below, or named as not run with the reason', () => {
    // A line documented in several places (--help and README) is one example.
    const documented = [...new Set([...helpExamples(), ...documentedCommandLines()])].sort();
    expect(documented).toEqual([...Object.keys(RUNS), ...Object.keys(NOT_RUN)].sort());
  });

  it.each(Object.keys(RUNS))(
    '%s',
    async (line) => {
      await RUNS[line]!(line);
    },
    60_000,
  );
});
