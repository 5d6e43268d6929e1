// A live run of refrelay on loopback, in a temp folder: three source repositories on "master"
// hosts whose post-receive hooks run `refrelay enqueue`, two refrelay nodes sharing one store,
// a `git daemon` destination and a file:// destination. Developers push; the queue drains;
// the destinations end in sync. Everything it starts is stopped and removed at the end.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/refrelay.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'refrelay-demo-'));
const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Demo',
  GIT_AUTHOR_EMAIL: 'demo@example.com',
  GIT_COMMITTER_NAME: 'Demo',
  GIT_COMMITTER_EMAIL: 'demo@example.com',
};
const children = [];
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const refrelay = (...args) => {
  const result = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.status;
};
const step = (text) => console.log(`\n== ${text}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function main() {
  const base = join(root, 'masters');
  const gitDaemonBase = join(root, 'git-daemon');
  const projects = ['apps/web', 'apps/api', 'tools/ci'];
  mkdirSync(gitDaemonBase, { recursive: true });
  for (const project of projects) git(root, 'init', '-q', '--bare', join(gitDaemonBase, `${project}.git`));
  const port = await freePort();
  const daemon = spawn(
    'git',
    ['daemon', '--reuseaddr', '--enable=receive-pack', '--export-all', `--base-path=${gitDaemonBase}`, '--listen=127.0.0.1', `--port=${port}`, gitDaemonBase],
    { env, stdio: 'ignore', detached: true },
  );
  children.push(daemon);

  const configText = (nodeId, httpListen) =>
    [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      `  nodeId = ${nodeId}`,
      '  distributionInterval = 1s',
      '  randomDelay = 500ms',
      `  httpListen = ${httpListen}`,
      '[remote "dr"]',
      `  url = file://${join(root, 'dr')}/\${name}.git`,
      '  push = +refs/*:refs/*',
      '  mirror = true',
      '  replicationDelay = 2s',
      '[remote "public.mirror"]',
      `  url = git://127.0.0.1:${port}/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/*',
      '  push = refs/tags/*:refs/tags/*',
      '  projects = apps/*',
      '  replicationDelay = 2s',
      '',
    ].join('\n');
  // Each node has its own config, as each master would: the same store and remotes, its own
  // nodeId and HTTP port (two nodes on one host cannot share a port). The masters' hooks and
  // `status` use master-1's.
  const httpPorts = { 'master-1': await freePort(), 'master-2': await freePort() };
  const configs = {};
  for (const [nodeId, httpPort] of Object.entries(httpPorts)) {
    configs[nodeId] = join(root, `${nodeId}.config`);
    writeFileSync(configs[nodeId], configText(nodeId, `127.0.0.1:${httpPort}`));
  }
  const config = configs['master-1'];
  step(`workspace ${root}`);
  console.log(`git daemon destination on git://127.0.0.1:${port}/, file:// destination in ${join(root, 'dr')}`);
  step(`master-1's configuration (refrelay config check); master-2's differs only in nodeId = master-2 and httpListen = 127.0.0.1:${httpPorts['master-2']}`);
  refrelay('config', 'check', '--config', config);
  refrelay('init', '--config', config);

  for (const project of projects) {
    const repo = join(base, `${project}.git`);
    mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q', '--bare', '-b', 'main');
    writeFileSync(join(repo, 'hooks', 'post-receive'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" enqueue --stdin --config "${config}"\n`, {
      mode: 0o755,
    });
  }

  step('two refrelay nodes start on one shared store');
  for (const nodeId of ['master-1', 'master-2']) {
    const node = spawn(process.execPath, [bin, 'daemon', '--config', configs[nodeId], '--log-level', 'warn'], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    children.push(node);
  }
  console.log(`dashboards: http://127.0.0.1:${httpPorts['master-1']}/ and http://127.0.0.1:${httpPorts['master-2']}/ (metrics at /metrics)`);

  step('developers push into the masters; each post-receive hook queues the update');
  for (const project of projects) {
    const work = join(root, 'work', project);
    mkdirSync(work, { recursive: true });
    git(work, 'init', '-q', '-b', 'main');
    for (let n = 1; n <= 3; n++) {
      writeFileSync(join(work, 'README'), `${project} change ${n}\n`);
      git(work, 'add', 'README');
      git(work, 'commit', '-q', '-m', `change ${n}`);
    }
    git(work, 'tag', 'v1.0');
    const pushed = spawnSync('git', ['push', join(base, `${project}.git`), 'main', 'v1.0'], { cwd: work, env, encoding: 'utf8' });
    const hookLines = pushed.stderr.split('\n').filter((line) => line.startsWith('remote: refrelay'));
    console.log(`git push ${project}: ${hookLines.map((line) => line.replace(/^remote: /, '').trim()).join(' ')}`);
  }

  step('refrelay status while the updates wait out replicationDelay (any node shows the same)');
  refrelay('status', '--config', config);

  const deadline = Date.now() + 60_000;
  for (;;) {
    const status = JSON.parse(spawnSync(process.execPath, [bin, 'status', '--json', '--config', config], { env, encoding: 'utf8' }).stdout);
    if (status.totals.waiting === 0 && status.totals.running === 0) break;
    if (Date.now() > deadline) throw new Error('the queue did not drain within 60 s');
    await sleep(500);
  }
  step('refrelay status after the nodes pushed');
  refrelay('status', '--config', config);

  step("each node's push counters (/metrics) and the cluster's readiness (/readyz)");
  for (const [nodeId, httpPort] of Object.entries(httpPorts)) {
    const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
    const pushes = metrics.split('\n').filter((line) => line.startsWith('refrelay_pushes_total{'));
    console.log(`${nodeId}: ${pushes.length === 0 ? 'no pushes' : pushes.join('  ')}`);
  }
  const ready = await fetch(`http://127.0.0.1:${httpPorts['master-2']}/readyz`);
  console.log(`/readyz: ${ready.status} ${JSON.stringify(await ready.json())}`);

  step('destinations compared with the masters');
  let inSync = true;
  for (const project of projects) {
    const source = git(join(base, `${project}.git`), 'for-each-ref', '--format=%(objectname) %(refname)');
    const dr = git(join(root, 'dr', `${project}.git`), 'for-each-ref', '--format=%(objectname) %(refname)');
    const drOk = dr === source;
    let mirrorText = 'not replicated (projects = apps/*)';
    if (project.startsWith('apps/')) {
      const listed = git(root, 'ls-remote', `git://127.0.0.1:${port}/${project}.git`)
        .split('\n')
        .filter((line) => line.includes('\trefs/'))
        .map((line) => line.split('\t').reverse().join(' '))
        .sort()
        .join('\n');
      const expected = source
        .split('\n')
        .filter(Boolean)
        .map((line) => line.split(' ').reverse().join(' '))
        .sort()
        .join('\n');
      const ok = listed === expected;
      inSync &&= ok;
      mirrorText = ok ? 'in sync' : 'DIFFERENT';
    }
    inSync &&= drOk;
    console.log(`${project.padEnd(10)} dr (file://): ${drOk ? 'in sync' : 'DIFFERENT'}   public.mirror (git://): ${mirrorText}`);
  }
  if (!inSync) throw new Error('a destination is out of sync');
  console.log('\nall destinations in sync');
}

let exitCode = 0;
try {
  await main();
} catch (error) {
  console.error(`demo failed: ${error.message}`);
  exitCode = 1;
} finally {
  for (const child of children) {
    try {
      process.kill(child.pid === undefined ? 0 : child.spawnargs[0] === 'git' ? -child.pid : child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await sleep(500);
  rmSync(root, { recursive: true, force: true });
}
process.exit(exitCode);
