import { describe, expect, it } from 'vitest';
import { configToJson, describeConfig } from '../../../src/config/describe-config.js';
import { validateConfig } from '../../../src/config/load-config.js';
import { entries } from './config-entries.js';

const FILE = '/etc/refrelay/replication.config';

describe('replication.webhookUrl', () => {
  it('is repeatable, and config check shows each receiver without its password or query', () => {
    const result = validateConfig(
      entries(
        'replication.storePath=/store',
        'replication.webhookUrl=https://ci:pw@ci.example/hook?token=abc',
        'replication.webhookUrl=http://127.0.0.1:8080/events',
      ),
      FILE,
      'n1',
    );
    expect(result.config!.webhookUrls).toEqual(['https://ci:pw@ci.example/hook?token=abc', 'http://127.0.0.1:8080/events']);
    const text = describeConfig(result.config!);
    expect(text).toContain('webhookUrl: https://ci.example/hook\n');
    expect(text).toContain('webhookUrl: http://127.0.0.1:8080/events');
    expect(text).not.toContain('pw');
    expect(text).not.toContain('abc');
    expect(configToJson(result.config!).webhookUrls).toEqual(['https://ci.example/hook', 'http://127.0.0.1:8080/events']);
  });

  it('refuses a value that is not an http(s) URL, naming it without its secrets', () => {
    const result = validateConfig(
      entries('replication.storePath=/store', 'replication.webhookUrl=ftp://u:pw@h/x?k=s', 'replication.webhookUrl=nowhere'),
      FILE,
      'n1',
    );
    expect(result.problems).toEqual([
      { file: FILE, key: 'replication.webhookUrl', message: 'expected an http:// or https:// URL, got a ftp: URL: ftp://h/x' },
      { file: FILE, key: 'replication.webhookUrl', message: 'expected an http:// or https:// URL: an unparsable URL' },
    ]);
  });
});
