import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskStore } from '../../src/store/task-store.js';
import { uriKey } from '../../src/task/task.js';
import { runCli } from '../support/cli.js';
import { writeConfig } from '../support/refrelay-node.js';
import { namesIn, readUriStateFile, waitingTaskNames } from '../support/store-files.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();
const threeThousandYearsMs = 3000 * 365.25 * 24 * 3600 * 1000;

/** A store with remotes `dr` (https, credentials in the URL) and `gh` (ssh); nothing queued or failed. */
function setup(): { store: string; config: string } {
  const root = tempDir('refrelay-retry-backoff');
  const store = join(root, 'store');
  mkdirSync(join(root, 'repos'));
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${join(root, 'repos')}`,
    '[remote "dr"]',
    '  url = https://bot:s3cret@dr.example.com/${name}.git',
    '[remote "gh"]',
    '  url = ssh://git@gh.example.com/mirror/${name}.git',
  ]);
  return { store, config };
}

/** A retry state as a node writes it, or as a damaged or hand-written file says. */
function writeState(store: string, uri: string, fields: Record<string, unknown> = {}): string {
  const key = uriKey(uri);
  mkdirSync(join(store, 'uri-state'), { recursive: true });
  const now = Date.now();
  writeFileSync(
    join(store, 'uri-state', `${key}.json`),
    `${JSON.stringify({ uri, attempts: 3, lastError: 'connection refused', notBefore: now + threeThousandYearsMs, updatedAt: now, nodeId: 'node-1', ...fields })}\n`,
  );
  return key;
}

describe('refrelay retry clears backoffs', () => {
  it('--uri clears the backoff of a matching URI with no failed task, printing it redacted, and leaves the others', () => {
    const s = setup();
    const app = writeState(s.store, 'https://bot:s3cret@dr.example.com/team/app.git');
    const other = writeState(s.store, 'https://bot:s3cret@dr.example.com/team/other.git');

    const result = runCli(['retry', '--config', s.config, '--uri', 'bot:s3cret@dr.example.com/team/app']);
    expect(result).toEqual({ status: 0, stdout: 'cleared the backoff of 1 URI:\n  https://bot:***@dr.example.com/team/app.git\n', stderr: '' });
    expect(readUriStateFile(s.store, app)).toBeUndefined();
    expect(readUriStateFile(s.store, other)).toBeDefined();

    expect(runCli(['retry', '--config', s.config, '--uri', 'team/app'])).toEqual({ status: 0, stdout: 'Nothing to retry\n', stderr: '' });
    expect(readUriStateFile(s.store, other)).toBeDefined();
  });

  it('--remote clears the backoffs of the URIs its URL expands to, --all every one left, a file without a uri included', () => {
    const s = setup();
    writeState(s.store, 'https://bot:s3cret@dr.example.com/a.git');
    writeState(s.store, 'https://bot:s3cret@dr.example.com/team/b.git');
    const gh = writeState(s.store, 'ssh://git@gh.example.com/mirror/a.git');
    const bare = writeState(s.store, 'ssh://git@gh.example.com/mirror/c.git', { uri: undefined });

    expect(runCli(['retry', '--config', s.config, '--remote', 'dr'])).toEqual({
      status: 0,
      stdout: 'cleared the backoff of 2 URIs:\n  https://bot:***@dr.example.com/a.git\n  https://bot:***@dr.example.com/team/b.git\n',
      stderr: '',
    });
    expect(namesIn(join(s.store, 'uri-state')).sort()).toEqual([`${gh}.json`, `${bare}.json`].sort());
    expect(runCli(['retry', '--config', s.config, '--remote', 'nosuch'])).toEqual({ status: 0, stdout: 'Nothing to retry\n', stderr: '' });

    const all = runCli(['retry', '--config', s.config, '--all']);
    expect(all.status).toBe(0);
    expect(all.stdout.split('\n')).toEqual([
      'cleared the backoff of 2 URIs:',
      ...['  ssh://git@gh.example.com/mirror/a.git', `  uri-state/${bare}.json`].sort(),
      '',
    ]);
    expect(namesIn(join(s.store, 'uri-state'))).toEqual([]);
  });

  it('says both what it moved back and what backoffs it cleared when it did both', async () => {
    const s = setup();
    const failedUri = 'ssh://git@gh.example.com/mirror/a.git';
    await new TaskStore({ root: s.store, nodeId: 'node-1' }).parkFailed(
      { project: 'a', refs: ['refs/heads/main'], uri: failedUri, remote: 'gh' },
      { reason: 'rejected by the destination: non-fast-forward', refs: ['refs/heads/main'] },
    );
    const backingOff = writeState(s.store, 'ssh://git@gh.example.com/mirror/b.git');

    expect(runCli(['retry', '--config', s.config, '--remote', 'gh'])).toEqual({
      status: 0,
      stdout: 'moved 1 failed task back to waiting\ncleared the backoff of 1 URI:\n  ssh://git@gh.example.com/mirror/b.git\n',
      stderr: '',
    });
    expect(existsSync(join(s.store, 'uri-state', `${backingOff}.json`))).toBe(false);
    expect(waitingTaskNames(s.store)).toHaveLength(1);
  });
});
