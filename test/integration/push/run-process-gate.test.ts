import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../../src/push/run-process.js';
import { repoRoot } from '../../support/paths.js';
import { isAlive } from '../../support/processes.js';
import { waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
/** Writes its own pid to the file given: `exec` from the gate keeps the pid. */
const writePid = (file: string): [string, string[]] => ['sh', ['-c', 'echo $$ > "$1"', 'write-pid', file]];

describe('a push held until its pid is recorded (run-process.ts)', () => {
  it('starts the command only once the record is written, as the very process whose pid was recorded', async () => {
    const marker = join(tempDir('refrelay-gate'), 'ran');
    let recorded: number | undefined;
    let openGate: (go: boolean) => void = () => undefined;
    const [command, args] = writePid(marker);
    const running = runProcess(command, args, {
      env,
      killGraceMs: 1000,
      onSpawn: (pid) => {
        recorded = pid;
        return new Promise((resolve) => (openGate = resolve));
      },
    });
    await waitUntil('the gate to be spawned', () => recorded !== undefined);
    // The gate blocks reading its stdin (state S, still the gate's command line): until a line
    // comes, the command has not run.
    const gate = (): { state: string; cmdline: string } => ({
      state: readFileSync(`/proc/${recorded}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .charAt(0),
      cmdline: readFileSync(`/proc/${recorded}/cmdline`, 'utf8'),
    });
    await waitUntil('the gate to block reading its input', () => gate().state === 'S');
    expect(gate().cmdline).toContain('read -r go');
    expect(existsSync(marker)).toBe(false);

    openGate(true);
    const result = await running;

    expect(result.exitCode).toBe(0);
    expect(Number(readFileSync(marker, 'utf8'))).toBe(recorded);
  });

  it('never starts the command when the answer is no (the lock was lost while the record was written)', async () => {
    const marker = join(tempDir('refrelay-gate-refused'), 'ran');
    let recorded: number | undefined;
    const [command, args] = writePid(marker);

    const result = await runProcess(command, args, {
      env,
      killGraceMs: 1000,
      onSpawn: async (pid) => {
        recorded = pid;
        return false;
      },
    });

    expect(recorded).toBeGreaterThan(1);
    expect(result).toMatchObject({ exitCode: 1, killed: false });
    expect(existsSync(marker)).toBe(false);
  });

  it('never starts the command when the node dies before the record is written', async () => {
    const marker = join(tempDir('refrelay-gate-dies'), 'ran');
    const [command, args] = writePid(marker);
    const script = [
      `import { runProcess } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'dist/push/run-process.js')).href)};`,
      `runProcess(${JSON.stringify(command)}, ${JSON.stringify(args)}, {`,
      `  env: ${JSON.stringify(env)}, killGraceMs: 1000,`,
      '  onSpawn: (pid) => { console.log(pid); return new Promise(() => undefined); },',
      '});',
    ].join('\n');
    const node = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    node.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const gatePid = await waitUntil('the node to spawn the gate', () => (/^\d+\n/.test(output) ? Number(output) : undefined), 15_000);
    const exited = new Promise((resolve) => node.once('exit', resolve));

    node.kill('SIGKILL');
    await exited;
    await waitUntil('the gate to end without its line', () => !isAlive(gatePid), 15_000);

    expect(existsSync(marker)).toBe(false);
  });

  it('reports a command the gate cannot run as a command that could not start', async () => {
    const result = await runProcess('/nonexistent/git', ['push'], { env, killGraceMs: 1000, onSpawn: async () => true });

    expect(result.spawnError?.message).toContain('/nonexistent/git');
    expect(result.exitCode).toBe(127);
  });
});
