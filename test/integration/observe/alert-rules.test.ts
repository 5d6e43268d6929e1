import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The shipped Prometheus alert rules (contrib/prometheus/refrelay-alerts.yml), checked and
 * unit-tested by Prometheus' own promtool: refrelay-alerts.test.yml feeds each rule the series
 * that must raise it and a healthy one that must not, and compares the alerts with their labels,
 * summaries and runbooks. scripts/test.sh installs promtool (Debian package prometheus).
 */
const dir = fileURLToPath(new URL('../../../contrib/prometheus/', import.meta.url));

function promtool(args: string[]): { status: number | null; output: string } {
  const result = spawnSync('promtool', args, { cwd: dir, encoding: 'utf8' });
  if (result.error !== undefined) throw new Error(`promtool could not run (${result.error.message}): scripts/test.sh installs it (Debian package prometheus)`);
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('alert rules for Prometheus', () => {
  it('are valid rules, nine of them, each with a runbook', () => {
    expect(readFileSync(`${dir}/refrelay-alerts.yml`, 'utf8').match(/^ {10}runbook: >-$/gm)).toHaveLength(9);
    const checked = promtool(['check', 'rules', 'refrelay-alerts.yml']);
    expect(checked.output).toContain('SUCCESS: 9 rules found');
    expect(checked.status).toBe(0);
  });

  it('fire on the series each one is for and stay quiet on healthy ones (promtool test rules)', () => {
    const tested = promtool(['test', 'rules', 'refrelay-alerts.test.yml']);
    expect(tested.output).toContain('SUCCESS');
    expect(tested.output).not.toContain('FAILED');
    expect(tested.status).toBe(0);
  });
});
