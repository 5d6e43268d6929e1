import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadCredentials } from '../../../src/config/secure-config.js';
import { ConfigError } from '../../../src/errors.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

function secureFile(mode: number, text = '[remote "dr"]\n  username = bot\n  password = s3cr3t-pw\n[remote "ci"]\n  password = only-pw\n'): string {
  const file = join(tempDir('refrelay-secure'), 'secure.config');
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => `${p.key}: ${p.message}`);
    throw error;
  }
  return [];
}

describe('secure.config', () => {
  it('reads username and password per remote from a 0600 file; printing the result shows no value', () => {
    const credentials = loadCredentials({ secureConfig: secureFile(0o600), allowInsecureSecrets: false });
    expect(credentials.for('dr')).toEqual({ username: 'bot', password: 's3cr3t-pw' });
    expect(credentials.for('ci')).toEqual({ password: 'only-pw' });
    expect(credentials.for('other')).toBeUndefined();
    expect(credentials.remotes).toEqual(['ci', 'dr']);
    for (const shown of [JSON.stringify({ credentials }), inspect(credentials), String(credentials)]) expect(shown).not.toMatch(/s3cr3t|only-pw/);
  });

  it('refuses a file group or others may read, saying how to fix it, unless allowInsecureSecrets', () => {
    const file = secureFile(0o644);
    expect(problemsOf(() => loadCredentials({ secureConfig: file, allowInsecureSecrets: false }))).toEqual([
      'replication.secureConfig: holds passwords but group or others may access it (mode 0644): run chmod 600 on it, or set replication.allowInsecureSecrets = true',
    ]);
    expect(loadCredentials({ secureConfig: file, allowInsecureSecrets: true }).for('dr')?.password).toBe('s3cr3t-pw');
  });

  it('a missing or malformed file is a config error that shows no value', () => {
    const dir = tempDir('refrelay-secure');
    expect(problemsOf(() => loadCredentials({ secureConfig: join(dir, 'absent.config'), allowInsecureSecrets: false }))).toEqual([
      'replication.secureConfig: does not exist',
    ]);
    const bad = secureFile(0o600, '[remote "dr"]\n  password = s3cr3t-pw\n[broken\n');
    const problems = problemsOf(() => loadCredentials({ secureConfig: bad, allowInsecureSecrets: false }));
    expect(problems).toHaveLength(1);
    expect(problems.join('\n')).not.toContain('s3cr3t');
  });

  it('no secureConfig: no credentials', () => {
    expect(loadCredentials({ allowInsecureSecrets: false }).remotes).toEqual([]);
  });
});
