// refrelay benchmarks. Every figure is a ratio against a baseline measured in the same run on the
// same machine, so results compare across machines. Run with `npm run bench` (builds first).
// Options: --only NAME[,NAME] to run some benchmarks; --quick for smaller sizes.
import { cpus, totalmem } from 'node:os';
import { argv } from 'node:process';

const only = (() => {
  const at = argv.indexOf('--only');
  return at >= 0 ? new Set(argv[at + 1].split(',')) : undefined;
})();
const quick = argv.includes('--quick');

const suites = [
  ['task-create', './bench/task-create.mjs'],
  ['enqueue-startup', './bench/enqueue-startup.mjs'],
  ['list-waiting', './bench/list-waiting.mjs'],
  ['fan-out', './bench/fan-out.mjs'],
  ['scale-out', './bench/scale-out.mjs'],
  ['watcher', './bench/watcher.mjs'],
  ['live-lag', './bench/live-lag.mjs'],
  ['ssh-reuse', './bench/ssh-reuse.mjs'],
  ['backlog', './bench/backlog.mjs'],
  ['backlog-sshfs', './bench/backlog-sshfs.mjs'],
];

console.log(`refrelay bench — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
let failures = 0;
for (const [name, file] of suites) {
  if (only && !only.has(name)) continue;
  const { run } = await import(file);
  const result = await run({ quick });
  const verdict = result.pass ? 'PASS' : 'FAIL';
  if (!result.pass) failures++;
  console.log(`\n[${verdict}] ${name}: ${result.summary}`);
  for (const line of result.details ?? []) console.log(`    ${line}`);
}
process.exitCode = failures > 0 ? 1 : 0;
