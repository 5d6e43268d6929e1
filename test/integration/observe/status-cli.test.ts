import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { runCli } from '../../support/cli.js';
import { cliBin } from '../../support/paths.js';
import { writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('refrelay status --watch', () => {
  it('prints the table again every 2 s until interrupted, and refuses --json with --watch', async () => {
    const root = tempDir('refrelay-status-watch');
    const config = writeConfig(join(root, 'replication.config'), ['[replication]', `  storePath = ${join(root, 'store')}`, '[remote "dr"]', '  url = /srv/dr/${name}.git']);
    await new TaskStore({ root: join(root, 'store'), nodeId: 'hook' }).create({ project: 'app', refs: ['refs/heads/main'], uri: '/srv/dr/app.git', remote: 'dr' });

    const child = spawn(process.execPath, [cliBin, 'status', '--watch', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const deadline = Date.now() + 15_000;
    while ((out.match(/\(every 2 s; Ctrl-C to stop\)/g) ?? []).length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('exit', resolve));
    const refreshes = out.split('(every 2 s; Ctrl-C to stop)');
    expect(refreshes.length).toBeGreaterThanOrEqual(3);
    for (const screen of refreshes.slice(0, 2)) expect(screen).toMatch(/dr\s+\/srv\/dr\/app\.git\s+1\s/);

    const both = runCli(['status', '--watch', '--json', '--config', config]);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('status: --watch shows the table; use --json without --watch (or poll it)');
  }, 30_000);
});
