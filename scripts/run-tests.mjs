// Runs vitest and prints one closing line "N passed, N failed[, N skipped]" built from its JSON
// report, because CI does not read vitest's own summary. Exits with vitest's status.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';

const report = '.ci-out/vitest.json';
mkdirSync('.ci-out', { recursive: true });
rmSync(report, { force: true });
const run = spawnSync('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, NO_COLOR: '1' },
});
let summary;
try {
  summary = JSON.parse(readFileSync(report, 'utf8'));
} catch {
  console.log('0 passed, 1 failed');
  process.exit(run.status || 1);
}
// A file that fails to load has no failed test but a failed suite: count it as a failure.
const failed = summary.numFailedTests + (summary.numFailedTests === 0 ? summary.numFailedTestSuites : 0);
const skipped = summary.numPendingTests + summary.numTodoTests;
console.log(`${summary.numPassedTests} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(run.status ?? 1);
