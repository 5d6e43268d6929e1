import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { initBare, makeWorkTree, git, refsOf } from '../../support/git.js';
import { startGitHttpServer, type GitHttpServer } from '../../support/git-http.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { waitingTaskNames, waitingTaskPaths } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
const servers: GitHttpServer[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  for (const server of servers.splice(0)) await server.stop();
});

const SECURE_PASSWORD = 'secure-Config-Pw-7731';
const URL_PASSWORD = 'url-Embedded-Pw-5520';

/** Every file under `dir`, recursively, with its content. */
function allFiles(dir: string): Array<{ path: string; text: string }> {
  const found: Array<{ path: string; text: string }> = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...allFiles(path));
    else found.push({ path, text: readFileSync(path, 'utf8') });
  }
  return found;
}

function setup(): { root: string; base: string; store: string; config: string; work: string; dest: string } {
  const root = tempDir('refrelay-secrets');
  const base = join(root, 'base');
  const source = initBare(join(base, 'app.git'));
  const work = makeWorkTree(join(root, 'work'), 1);
  git(work, ['push', '-q', source, 'main']);
  const dest = join(root, 'dest');
  mkdirSync(dest);
  return { root, base, store: join(root, 'store'), config: join(root, 'replication.config'), work, dest };
}

describe('secrets never leave secure.config and the URLs that carry them', () => {
  it('a push with a secure.config password and one with a user:password URL land; no output channel, log, status or store file shows either secret', async () => {
    const s = setup();
    const http = await startGitHttpServer(s.dest, { username: 'replicator', password: SECURE_PASSWORD });
    servers.push(http);
    const publicRoot = join(s.root, 'public');
    const urlServer = await startGitHttpServer(publicRoot, { username: 'bot', password: URL_PASSWORD });
    servers.push(urlServer);
    initBare(join(s.dest, 'app.git'));
    initBare(join(publicRoot, 'app.git'));
    const secure = join(s.root, 'secure.config');
    writeFileSync(secure, `[remote "dr"]\n\tusername = replicator\n\tpassword = ${SECURE_PASSWORD}\n`);
    chmodSync(secure, 0o600);
    writeConfig(s.config, [
      '[replication]',
      `  storePath = ${s.store}`,
      `  basePath = ${s.base}`,
      '  distributionInterval = 100ms',
      '  randomDelay = 0',
      '  httpListen = off',
      '[remote "dr"]',
      `  url = ${http.url('${name}.git')}`,
      '  replicationDelay = 0',
      '  replicationMaxRetries = 1',
      '[remote "public"]',
      `  url = http://bot:${URL_PASSWORD}@127.0.0.1:${urlServer.port}/\${name}.git`,
      '  replicationDelay = 0',
      '  replicationMaxRetries = 1',
    ]);
    const outputs: string[] = [];
    const enqueue = runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/main']);
    expect(enqueue.status).toBe(0);
    outputs.push(enqueue.stdout, enqueue.stderr);
    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    nodes.push(node);
    expect(await node.exited).toEqual({ code: 0, signal: null });
    const main = refsOf(join(s.base, 'app.git')).get('refs/heads/main');
    expect(refsOf(join(s.dest, 'app.git')).get('refs/heads/main')).toBe(main);
    expect(refsOf(join(publicRoot, 'app.git')).get('refs/heads/main')).toBe(main);
    expect(http.logins).toContain(`replicator:${SECURE_PASSWORD}`);
    expect(node.logs().filter((line) => line.msg === 'pushed')).toHaveLength(2);
    outputs.push(JSON.stringify(node.logs()), node.stderr);
    for (const args of [['status'], ['status', '--json'], ['config', 'check'], ['config', 'check', '--json']]) {
      const result = runCli([...args, '--config', s.config]);
      expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      outputs.push(result.stdout, result.stderr);
    }
    const everything = [...outputs, ...allFiles(s.store).map((file) => `${file.path}\n${file.text}`)].join('\n');
    expect(everything).toContain('bot:***@127.0.0.1');
    expect(everything).not.toContain(SECURE_PASSWORD);
    expect(everything).not.toContain(URL_PASSWORD);
  });

  it('the daemon refuses to start with a secure.config others can read, with exit 3 and the fix in the message', () => {
    const s = setup();
    const secure = join(s.root, 'secure.config');
    writeFileSync(secure, `[remote "dr"]\n\tpassword = ${SECURE_PASSWORD}\n`);
    chmodSync(secure, 0o644);
    writeConfig(s.config, [
      '[replication]',
      `  storePath = ${s.store}`,
      `  basePath = ${s.base}`,
      '  httpListen = off',
      '[remote "dr"]',
      '  url = https://mirror.example.com/${name}.git',
    ]);
    const result = runCli(['daemon', '--config', s.config, '--drain']);
    expect(result.status).toBe(3);
    expect(result.stderr).toContain(
      `${secure}: replication.secureConfig: holds passwords but group or others may access it (mode 0644): run chmod 600 on it, or set replication.allowInsecureSecrets = true`,
    );
    expect(result.stderr + result.stdout).not.toContain(SECURE_PASSWORD);
  });
});

describe('task files are untrusted input', () => {
  it('a task naming an unknown remote, a URL its remote does not have or a path-escaping project is never pushed: it lands in failed/ with the reason and --drain exits 1', async () => {
    const s = setup();
    const evilTarget = initBare(join(s.root, 'evil.git'));
    writeConfig(s.config, [
      '[replication]',
      `  storePath = ${s.store}`,
      `  basePath = ${s.base}`,
      '  distributionInterval = 100ms',
      '  randomDelay = 0',
      '  lockStale = 1s',
      '  httpListen = off',
      '[remote "dr"]',
      `  url = ${s.dest}/\${name}.git`,
      '  replicationDelay = 0',
    ]);
    const store = new TaskStore({ root: s.store, nodeId: 'intruder' });
    await store.createMany([
      { project: 'app', refs: ['refs/heads/main'], uri: `${s.dest}/app.git`, remote: 'nosuch' },
      { project: 'app', refs: ['refs/heads/main'], uri: evilTarget, remote: 'dr' },
      { project: '../base/app', refs: ['refs/heads/main'], uri: `${s.dest}/../base/app.git`, remote: 'dr' },
    ]);
    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    nodes.push(node);
    expect(await node.exited).toEqual({ code: 1, signal: null });
    expect(node.logs().filter((line) => line.msg === 'pushed')).toEqual([]);
    expect(refsOf(evilTarget).size).toBe(0);
    expect(waitingTaskNames(s.store)).toEqual([]);
    const reasons = [uriKey(`${s.dest}/app.git`), uriKey(evilTarget), uriKey(`${s.dest}/../base/app.git`)].flatMap((key) =>
      readdirSync(storeDir(s.store, 'failed', key))
        .filter((name) => name.endsWith('.reason.json'))
        .map((name) => JSON.parse(readFileSync(storeDir(s.store, 'failed', key, name), 'utf8')).reason as string),
    );
    expect(reasons.sort()).toEqual([
      'invalid project name "../base/app": has a ".." segment',
      `remote "nosuch" is not configured in ${s.config}`,
      `uri "${evilTarget}" is not a URL of remote "dr" for project "app"`,
    ]);
    expect(node.logs().filter((line) => line.msg === 'task refused: parked in failed/ without pushing')).toHaveLength(3);
  });
});

describe('store permissions', () => {
  it('init and enqueue write task files 0640 in folders 0750 by default, and as storeUmask says otherwise', () => {
    const s = setup();
    writeConfig(s.config, ['[replication]', `  storePath = ${s.store}`, `  basePath = ${s.base}`, '[remote "dr"]', `  url = ${s.dest}/\${name}.git`], {
      initStore: false,
    });
    expect(runCli(['init', '--config', s.config]).status).toBe(0);
    expect(runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/main'], { env: { NO_COLOR: '1' } }).status).toBe(0);
    const waiting = storeDir(s.store, 'waiting');
    const [task] = waitingTaskPaths(s.store);
    expect((statSync(task!).mode & 0o777).toString(8)).toBe('640');
    expect((statSync(dirname(task!)).mode & 0o777).toString(8)).toBe('750');
    expect((statSync(waiting).mode & 0o777).toString(8)).toBe('750');
    expect((statSync(s.store).mode & 0o777).toString(8)).toBe('750');

    const strict = join(s.root, 'strict.config');
    const strictStore = join(s.root, 'strict-store');
    writeConfig(
      strict,
      ['[replication]', `  storePath = ${strictStore}`, `  basePath = ${s.base}`, '  storeUmask = 077', '[remote "dr"]', `  url = ${s.dest}/\${name}.git`],
      { initStore: false },
    );
    expect(runCli(['init', '--config', strict]).status).toBe(0);
    expect(runCli(['enqueue', '--config', strict, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    const strictWaiting = storeDir(strictStore, 'waiting');
    const [strictTask] = waitingTaskPaths(strictStore);
    expect((statSync(strictTask!).mode & 0o777).toString(8)).toBe('600');
    expect((statSync(dirname(strictTask!)).mode & 0o777).toString(8)).toBe('700');
    expect((statSync(strictWaiting).mode & 0o777).toString(8)).toBe('700');
  });

  it('the daemon warns when the store folder is world-writable', async () => {
    const s = setup();
    mkdirSync(s.store);
    chmodSync(s.store, 0o777);
    writeConfig(s.config, [
      '[replication]',
      `  storePath = ${s.store}`,
      `  basePath = ${s.base}`,
      '  httpListen = off',
      '[remote "dr"]',
      `  url = ${s.dest}/\${name}.git`,
    ]);
    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    nodes.push(node);
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.logs().find((line) => line.msg.startsWith('the store folder is world-writable'))).toMatchObject({ storePath: s.store, mode: '0777' });
  });
});
