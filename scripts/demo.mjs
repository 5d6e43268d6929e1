// A live run of refrelay on loopback, in a temp folder: source repositories whose post-receive
// hooks run `refrelay enqueue`, real `git push`es into them, and the cluster's queue as
// `refrelay status` shows it. Everything it creates is removed at the end.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const refrelay = (...args) => {
  const result = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' });
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  if (result.status !== 0) throw new Error(`refrelay ${args.join(' ')} exited ${result.status}`);
};
const step = (text) => console.log(`\n== ${text}`);

try {
  const base = join(root, 'masters');
  const config = join(root, 'replication.config');
  writeFileSync(config, [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${base}`,
    '  nodeId = demo-node-1',
    '[remote "dr"]',
    `  url = file://${join(root, 'dr')}/\${name}.git`,
    '  push = +refs/*:refs/*',
    '  mirror = true',
    '[remote "public.mirror"]',
    `  url = ${join(root, 'public')}/\${name}.git`,
    '  push = +refs/heads/*:refs/heads/*',
    '  push = refs/tags/*:refs/tags/*',
    '  projects = apps/*',
    '',
  ].join('\n'));
  step(`workspace ${root}`);
  refrelay('config', 'check', '--config', config);

  const projects = ['apps/web', 'apps/api', 'tools/ci'];
  for (const project of projects) {
    const repo = join(base, `${project}.git`);
    mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q', '--bare', '-b', 'main');
    writeFileSync(join(repo, 'hooks', 'post-receive'), `#!/bin/sh\nexec "${process.execPath}" "${bin}" enqueue --stdin --config "${config}"\n`, { mode: 0o755 });
  }

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

  step('refrelay status (read from the shared store; any node shows the same)');
  refrelay('status', '--config', config);
} finally {
  rmSync(root, { recursive: true, force: true });
}
