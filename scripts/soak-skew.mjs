// Clock-skew soak: three refrelay nodes whose wall clocks are offset by −10 min, 0 and +10 min
// share one store and replicate a steady stream of updates to slow destinations. Staleness is
// judged on each observer's monotonic clock, so the run must end with zero lock takeovers, zero
// overlapping pushes and every update delivered. `node scripts/soak-skew.mjs --minutes 30`.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const minutes = Number(option('--minutes', 1)) || 1;
// Well above a heartbeat (lockStale / 6) plus scheduling hiccups of a busy 2-core machine.
const lockStale = option('--lock-stale', '10s');
const bin = fileURLToPath(new URL('../bin/refrelay.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'refrelay-soak-'));
const env = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Soak',
  GIT_AUTHOR_EMAIL: 's@example.com',
  GIT_COMMITTER_NAME: 'Soak',
  GIT_COMMITTER_EMAIL: 's@example.com',
};
const git = (cwd, ...a) => execFileSync('git', a, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const skews = { 'minus-10m': -600_000, zero: 0, 'plus-10m': 600_000 };
const projects = Array.from({ length: 6 }, (_, i) => `p${i}`);
const nodes = new Map();

function startNode(nodeId) {
  const child = spawn(process.execPath, [bin, 'daemon', '--config', join(root, 'replication.config'), '--node-id', nodeId], {
    env: { ...env, REFRELAY_TEST_CLOCK_OFFSET_MS: String(skews[nodeId]) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const node = { child, out: '', err: '' };
  child.stdout.on('data', (chunk) => (node.out += chunk));
  child.stderr.on('data', (chunk) => (node.err += chunk));
  nodes.set(nodeId, node);
}

let failed;
try {
  const base = join(root, 'base');
  writeFileSync(
    join(root, 'replication.config'),
    [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${base}`,
      '  distributionInterval = 500ms',
      '  randomDelay = 300ms',
      `  lockStale = ${lockStale}`,
      '[remote "mirror"]',
      `  url = ${join(root, 'dest')}/\${name}.git`,
      '  replicationDelay = 300ms',
      '  threads = 2',
    ].join('\n'),
  );
  execFileSync(process.execPath, [bin, 'init', '--config', join(root, 'replication.config')], { stdio: 'ignore' });
  for (const project of projects) {
    const repo = join(base, `${project}.git`);
    mkdirSync(repo, { recursive: true });
    git(repo, 'init', '-q', '--bare', '-b', 'main');
    writeFileSync(
      join(repo, 'hooks', 'post-receive'),
      `#!/bin/sh\nexec "${process.execPath}" "${bin}" enqueue --stdin -q --config "${join(root, 'replication.config')}"\n`,
      { mode: 0o755 },
    );
    const dest = join(root, 'dest', `${project}.git`);
    mkdirSync(dest, { recursive: true });
    git(dest, 'init', '-q', '--bare');
    writeFileSync(
      join(dest, 'hooks', 'pre-receive'),
      '#!/bin/sh\nif mkdir "$GIT_DIR/in-push" 2>/dev/null; then m=1; else echo overlap >> "$GIT_DIR/overlaps.log"; fi\nsleep 0.4\ncat >/dev/null\n[ "$m" = 1 ] && rmdir "$GIT_DIR/in-push"\nexit 0\n',
      { mode: 0o755 },
    );
    const work = join(root, 'work', project);
    mkdirSync(work, { recursive: true });
    git(work, 'init', '-q', '-b', 'main');
  }
  for (const nodeId of Object.keys(skews)) startNode(nodeId);
  const until = Date.now() + minutes * 60_000;
  let pushes = 0;
  while (Date.now() < until) {
    const project = projects[pushes % projects.length];
    const work = join(root, 'work', project);
    writeFileSync(join(work, 'f'), `${pushes}\n`);
    git(work, 'add', 'f');
    git(work, 'commit', '-q', '-m', `c${pushes}`);
    git(work, 'push', '-q', join(base, `${project}.git`), `main`, `main:refs/heads/b${pushes % 20}`, '--force');
    pushes++;
    await sleep(250);
  }
  // Let the cluster drain.
  const deadline = Date.now() + 120_000;
  const busy = () =>
    ['waiting', 'running'].some(
      (dir) =>
        existsSync(join(root, 'store', 'ref-updates', dir)) &&
        execFileSync('ls', [join(root, 'store', 'ref-updates', dir)], { encoding: 'utf8' }).trim() !== '',
    );
  while (busy() && Date.now() < deadline) await sleep(500);
  for (const node of nodes.values()) node.child.kill('SIGTERM');
  await sleep(3000);

  const logs = [...nodes.entries()].flatMap(([nodeId, node]) =>
    node.out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => ({ nodeId, ...JSON.parse(l) })),
  );
  const takeoverLines = logs.filter((l) => l.msg === 'took over a stale URI lock');
  const takeovers = takeoverLines.length;
  for (const line of takeoverLines)
    console.log(`takeover by ${line.nodeId} at ${line.time}: former node ${line.formerNode}, unchanged ${line.unchangedMs} ms, tasks ${line.tasks}`);
  const lost = logs.filter((l) => String(l.msg).startsWith('lost the URI lock')).length;
  const errors = logs.filter((l) => l.level >= 50).length + [...nodes.values()].filter((n) => /Error|unhandled/.test(n.err)).length;
  let overlaps = 0;
  let mismatched = 0;
  for (const project of projects) {
    const log = join(root, 'dest', `${project}.git`, 'overlaps.log');
    if (existsSync(log)) overlaps += readFileSync(log, 'utf8').trim().split('\n').length;
    const want = git(join(base, `${project}.git`), 'for-each-ref', '--format=%(objectname) %(refname)');
    const got = git(join(root, 'dest', `${project}.git`), 'for-each-ref', '--format=%(objectname) %(refname)');
    if (want !== got) mismatched++;
  }
  const perNode = Object.fromEntries([...nodes.keys()].map((id) => [id, logs.filter((l) => l.nodeId === id && l.msg === 'pushed').length]));
  const offsets = Object.fromEntries(
    [...nodes.keys()].map((id) => {
      try {
        return [id, JSON.parse(readFileSync(join(root, 'store', 'nodes', `${id}.json`), 'utf8')).clockOffsetMs];
      } catch {
        return [id, null];
      }
    }),
  );
  console.log(
    JSON.stringify(
      {
        minutes,
        lockStale,
        updatesPushed: pushes,
        pushesPerNode: perNode,
        clockOffsetMs: offsets,
        takeovers,
        lostLocks: lost,
        overlaps,
        projectsOutOfSync: mismatched,
        loggedErrors: errors,
      },
      null,
      2,
    ),
  );
  failed = takeovers > 0 || lost > 0 || overlaps > 0 || mismatched > 0 || errors > 0;
  console.log(failed ? 'SOAK FAILED' : 'SOAK PASSED: zero false takeovers, zero overlaps, all delivered');
} finally {
  for (const node of nodes.values()) node.child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
