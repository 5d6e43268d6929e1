import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const bin = fileURLToPath(new URL('../../bin/refrelay.js', import.meta.url));

export const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};

export const git = (cwd, ...args) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A bare source repository with `branches` branches (each a distinct ref update to replicate). */
export function makeSource(root, project, branches) {
  const repo = join(root, 'base', `${project}.git`);
  const work = join(root, 'work', project);
  mkdirSync(repo, { recursive: true });
  mkdirSync(work, { recursive: true });
  git(repo, 'init', '-q', '--bare', '-b', 'main');
  git(work, 'init', '-q', '-b', 'main');
  writeFileSync(join(work, 'f'), `${project}\n`);
  git(work, 'add', 'f');
  git(work, 'commit', '-q', '-m', 'init');
  const refs = [];
  for (let b = 0; b < branches; b++) {
    git(work, 'branch', `b${b}`);
    refs.push(`refs/heads/b${b}`);
  }
  git(work, 'push', '-q', repo, '--all');
  return { repo, refs };
}

export function bareRepo(path, preReceiveSleep) {
  mkdirSync(path, { recursive: true });
  git(path, 'init', '-q', '--bare', '-b', 'main');
  if (preReceiveSleep) writeFileSync(join(path, 'hooks', 'pre-receive'), `#!/bin/sh\ncat >/dev/null\nsleep ${preReceiveSleep}\n`, { mode: 0o755 });
}

/** Extra node options for the refrelay processes, e.g. BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'. */
const nodeArgs = () => (process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []);

/** Run `refrelay daemon --drain` processes; resolves with their logs once all exit. */
export function drainNodes(config, nodeIds) {
  return Promise.all(
    nodeIds.map(
      (nodeId) =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [...nodeArgs(), bin, 'daemon', '--drain', '--config', config, '--node-id', nodeId], {
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout.on('data', (chunk) => (out += chunk));
          child.on('exit', (code) => {
            if (code !== 0) reject(new Error(`node ${nodeId} exited ${code}`));
            else
              resolve(
                out
                  .split('\n')
                  .filter((line) => line.startsWith('{'))
                  .map((line) => JSON.parse(line)),
              );
          });
        }),
    ),
  );
}

/** Run async jobs with at most `limit` in flight. */
export async function pool(items, limit, job) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await job(items[next++]);
    }),
  );
}

export function pushAsync(cwd, args) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['push', '-q', ...args], { cwd, env: gitEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git push ${args.join(' ')}: ${err}`))));
  });
}

/** A long-running `refrelay daemon` (not --drain), with its JSON log lines collected. */
export function startNode(config, nodeId) {
  const child = spawn(process.execPath, [...nodeArgs(), bin, 'daemon', '--config', config, '--node-id', nodeId], { stdio: ['ignore', 'pipe', 'inherit'] });
  // Parsed as the lines arrive: benchmarks poll the log while the node works, and re-parsing
  // everything on each poll would take CPU from the node being measured.
  const parsed = [];
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop();
    for (const line of lines) if (line.startsWith('{')) parsed.push(JSON.parse(line));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    pid: child.pid,
    logs: () => parsed,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
