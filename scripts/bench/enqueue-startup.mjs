// Wall time of `refrelay enqueue` (the git-hook path) vs `node -e 0`, median of 10 each.
// Target: at most 1.5×.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, withTempDir, fmt } from './util.mjs';

const bin = fileURLToPath(new URL('../../bin/refrelay.js', import.meta.url));

function timeRun(args) {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

export async function run() {
  return withTempDir('enqueue', async (dir) => {
    const config = join(dir, 'replication.config');
    writeFileSync(
      config,
      `[replication]\n  storePath = ${join(dir, 'store')}\n  nodeId = bench\n[remote "a"]\n  url = file://${dir}/a/\${name}.git\n[remote "b"]\n  url = file://${dir}/b/\${name}.git\n  push = +refs/heads/*:refs/heads/*\n`,
    );
    if (spawnSync(process.execPath, [bin, 'init', '--config', config]).status !== 0) throw new Error('refrelay init failed');
    // Warm the page cache for both before measuring.
    timeRun(['-e', '0']);
    timeRun([bin, 'enqueue', '--config', config, '--project', 'warm', '--ref', 'refs/heads/main', '-q']);
    const baseline = [];
    const enqueue = [];
    for (let i = 0; i < 10; i++) {
      baseline.push(timeRun(['-e', '0']));
      enqueue.push(timeRun([bin, 'enqueue', '--config', config, '--project', `team/p${i}`, '--ref', 'refs/heads/main', '-q']));
    }
    const ratio = median(enqueue) / median(baseline);
    return {
      pass: ratio <= 1.5,
      summary: `refrelay enqueue = ${ratio.toFixed(2)}× node -e 0 (target ≤ 1.5×)`,
      details: [`median of 10: node -e 0 ${fmt(median(baseline))}, refrelay enqueue (2 remotes, fsync'd) ${fmt(median(enqueue))}`],
    };
  });
}
