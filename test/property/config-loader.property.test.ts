import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GERRIT_KEYS, REMOTE_KEYS, REPLICATION_KEYS, SECTION_KEYS, allKeys } from '../../src/config/config-keys.js';
import { configToJson, describeConfig, loadConfig } from '../../src/config/load-config.js';
import type { ReplicationConfig } from '../../src/config/types.js';
import { ConfigError } from '../../src/errors.js';

const SECRET = 'Sup3rS3cr3tT0ken';

/** Loads, or returns the ConfigError; any other exception fails the property. */
function loadOrError(file: string): ReplicationConfig | ConfigError {
  try {
    return loadConfig({ file, hostname: 'test-host' });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

/** Every object and function reachable from `value` is frozen. */
function expectDeepFrozen(value: unknown, path = 'config', seen = new Set<unknown>()): void {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || seen.has(value)) return;
  seen.add(value);
  expect({ path, frozen: Object.isFrozen(value) }).toEqual({ path, frozen: true });
  for (const key of Reflect.ownKeys(value as object)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor && 'value' in descriptor) expectDeepFrozen(descriptor.value, `${path}.${String(key)}`, seen);
  }
}

/** Numbers the rest of the code relies on: durations are whole ms ≥ 0, counts and weights in range. */
function expectSaneNumbers(config: ReplicationConfig): void {
  const durations = (record: object): void => {
    for (const [key, value] of Object.entries(record)) {
      if (key.endsWith('Ms')) expect({ key, ok: Number.isSafeInteger(value) && (value as number) >= 0 }).toEqual({ key, ok: true });
    }
  };
  durations(config);
  expect(config.distributionIntervalMs).toBeGreaterThan(0);
  expect(config.lockStaleMs).toBeGreaterThan(0);
  expect(config.maxPushes).toBeGreaterThanOrEqual(1);
  expect(config.bulkShares).toBeGreaterThanOrEqual(1);
  expect(config.bulkShares).toBeLessThanOrEqual(1000);
  expect(isAbsolute(config.storePath)).toBe(true);
  expect(new Set(config.remotes.map((r) => r.name)).size).toBe(config.remotes.length);
  for (const remote of config.remotes) {
    durations(remote);
    expect(remote.urls.length).toBeGreaterThan(0);
    expect(remote.push.length).toBeGreaterThan(0);
    expect(remote.threads).toBeGreaterThanOrEqual(1);
    expect(remote.shares).toBeGreaterThanOrEqual(1);
    expect(remote.shares).toBeLessThanOrEqual(1000);
    expect(remote.rescheduleDelayMs).toBeGreaterThanOrEqual(3000);
  }
}

/** Flips the case of some letters: git key names are case-insensitive. */
const anyCase = (key: string): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: key.length, maxLength: key.length })
    .map((flips) => [...key].map((c, i) => (flips[i] ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c)).join(''));

const gitKeyName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,14}$/);

const keyFor = (section: 'replication' | 'remote' | 'gerrit'): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom(...allKeys(SECTION_KEYS[section])).chain(anyCase) },
    // Typos and keys of other sections.
    { weight: 2, arbitrary: fc.constantFrom(...REPLICATION_KEYS, ...REMOTE_KEYS, ...GERRIT_KEYS).map((k) => `${k}x`) },
    { weight: 1, arbitrary: gitKeyName },
    // Not a key git accepts: the whole file is refused with its line.
    { weight: 1, arbitrary: fc.constantFrom('_x', '1abc', 'a_b', 'a.b', 'é', '') },
  );

const plausibleValue = fc.constantFrom(
  '15s',
  '2m',
  '500ms',
  '2 min',
  '0',
  '10',
  '1',
  '4',
  '100',
  '1000',
  'true',
  'false',
  'yes',
  'off',
  '/tmp/refrelay-store',
  'store',
  '../x',
  '/srv/${name}.git',
  'ssh://git@host:29418/${name}.git',
  'git@host:${name}.git',
  'https://host/${name}.git',
  '+refs/heads/*:refs/heads/*',
  'refs/tags/*',
  'team/*',
  '^lib-.*',
  'exact-project',
  '*',
  'dash',
  'basenameOnly',
  'slash',
  '127.0.0.1:0',
  'off',
  '[::1]:9464',
  '027',
  '0002',
  'accept-new',
  'yes',
  'node-1',
  'ssh -o BatchMode=yes',
  '^refs/meta/.*',
);

const garbageValue = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '-5s',
    '-1',
    '9'.repeat(40),
    `${'9'.repeat(20)}s`,
    '99999999999999999 days',
    '1e3',
    '0x10',
    '1.5',
    'NaN',
    'Infinity',
    '5 fortnights',
    'tru',
    '^(',
    '[',
    '(?<a>x)(?<a>y)',
    '\\',
    '^*',
    'a{2,1}',
    '${name',
    '../../..',
    'refs/heads/*:refs/heads/main',
    ':refs/heads/x',
    '^refs/heads/x',
    'refs/a:refs/b:refs/c',
    'ssh://',
    ':',
    'localhost:99999',
    '-oProxyCommand=x',
    'é😀',
    '0999',
    '8',
    'maybe',
    '"',
    '#',
    ';',
    '=',
    '\t',
    '\u00a0',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.integer().map(String),
  fc.double().map(String),
);

/** Values aimed at one kind of key, so every parser meets its own edge cases. */
const TYPED_VALUES: readonly (readonly [readonly string[], readonly string[]])[] = [
  [
    [
      'distributionInterval',
      'randomDelay',
      'lockStale',
      'shutdownGrace',
      'verifyInterval',
      'caughtUpThreshold',
      'usageHalfLife',
      'fullListingInterval',
      'replicationDelay',
      'rescheduleDelay',
      'replicationRetry',
      'timeout',
    ],
    ['0', '1', '15s', ' 3 s ', '2 MIN', '500ms', '1d', '-5s', '-1', '1.5s', `${'9'.repeat(20)}s`, '9007199254740991', '1 fortnight', 's', ''],
  ],
  [
    ['maxRetries', 'watchRepositoriesLimit', 'maxPushes', 'bulkShares', 'threads', 'replicationMaxRetries', 'shares'],
    ['0', '1', '7', ' 12 ', '1000', '1001', '-1', '1e3', '0x10', '1.0', '9'.repeat(30), ''],
  ],
  [
    [
      'watchRepositories',
      'autoReload',
      'replicateOnStartup',
      'sshConnectionReuse',
      'allowInsecureSecrets',
      'mirror',
      'createMissingRepositories',
      'defaultForceUpdate',
    ],
    ['true', 'FALSE', 'yes', 'off', '1', '0', '', 'maybe', '2'],
  ],
  [
    ['projects', 'excludeProjects', 'excludedRefsPattern'],
    ['team/*', '*', '^lib-.*', 'exact', '', '^(', '[', '^*', '^\\', '^(?<a>x)(?<a>y)', '^refs/meta/.*', 'a{2,1}', '^(a+)+$', '(?<=x)y'],
  ],
  [['push'], ['+refs/heads/*:refs/heads/*', 'refs/tags/*', 'refs/heads/*a:refs/x/*', ':refs/x', '^refs/x', 'refs/a..b', '+', 'main']],
  [['url'], ['/srv/${name}.git', 'file:///srv/${name}.git', 'git@host:${name}', 'https://host/${name}', '/srv/fixed.git', '', '${name}']],
  [['remoteNameStyle'], ['slash', 'DASH', 'underscore', 'basenameOnly', 'basename', '']],
  [['httpListen'], ['127.0.0.1:0', 'off', '[::1]:65535', 'host:65536', ':80', 'host', '[::1]80']],
  [['storeUmask'], ['027', '0002', '777', '8', '0999', '27', '']],
  [['nodeId'], ['node-1', 'a.b_c', '-x', 'node one', '', 'é']],
];

const typedValue = (key: string): fc.Arbitrary<string> => {
  const pool = TYPED_VALUES.find(([keys]) => keys.some((k) => k.toLowerCase() === key.toLowerCase()))?.[1];
  return pool === undefined ? plausibleValue : fc.constantFrom(...pool);
};

const value = fc.oneof({ weight: 4, arbitrary: plausibleValue }, { weight: 2, arbitrary: garbageValue });

/** git-config quoting: everything survives inside double quotes with \\ \" \n \t \b escaped. */
function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\x08/g, '\\b')}"`;
}

const valueText = (key: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 8, arbitrary: typedValue(key).map(quote) },
    { weight: 4, arbitrary: value.map(quote) },
    // As written by hand: comments, stray quotes and line breaks can make git refuse the file.
    { weight: 1, arbitrary: value },
  );

/** One line of a section: `key = value`, a bare key (true), or a comment. */
const entry = (section: 'replication' | 'remote' | 'gerrit'): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 16, arbitrary: keyFor(section).chain((key) => valueText(key).map((v) => `\t${key} = ${v}`)) },
    { weight: 1, arbitrary: keyFor(section).map((key) => `\t${key}`) },
    { weight: 1, arbitrary: fc.constantFrom('# comment', '; comment', '', '\t') },
  );

/** Where credentials are meant to go; none of them may come back out unredacted. */
const secretEntry = (section: 'replication' | 'remote'): fc.Arbitrary<string> =>
  section === 'replication'
    ? fc.constant(`\thttpToken = ${SECRET}`)
    : fc.constantFrom(
        `\turl = https://bot:${SECRET}@git.example.com/\${name}.git`,
        `\turl = ssh://git:${SECRET}@git.example.com/srv/\${name}.git`,
        `\tpassword = ${SECRET}`,
        `\tusername = ${SECRET}`,
      );

const remoteName = fc.oneof(
  fc.constantFrom(
    'backup',
    'eu.mirror',
    'a/b',
    'a b',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    '',
    'x"y',
    'x\\y',
    'é😀',
    '..',
    '-x',
    '${name}',
    'a]b',
    'UPPER',
  ),
  fc.string({ unit: 'binary', maxLength: 6 }),
);

const sectionHeader = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ header: '[replication]', kind: 'replication' as const }) },
  { weight: 5, arbitrary: remoteName.map((name) => ({ header: `[remote ${quote(name)}]`, kind: 'remote' as const })) },
  { weight: 2, arbitrary: fc.constant({ header: '[gerrit]', kind: 'gerrit' as const }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { header: '[Replication]', kind: 'replication' as const },
      { header: '[remote]', kind: 'remote' as const },
      { header: '[remote.legacy]', kind: 'remote' as const },
      { header: '[replication "x"]', kind: 'replication' as const },
      { header: '[core]', kind: 'replication' as const },
      { header: '[include]', kind: 'replication' as const },
      { header: '[includeIf "gitdir:/x/"]', kind: 'replication' as const },
      { header: '[remote "unterminated]', kind: 'remote' as const },
    ),
  },
);

const section = sectionHeader.chain(({ header, kind }) =>
  fc
    .tuple(fc.array(entry(kind), { maxLength: 4 }), kind === 'gerrit' ? fc.constant(undefined) : fc.option(secretEntry(kind), { freq: 3 }))
    .map(([lines, secret]) => [header, ...lines, ...(secret === undefined ? [] : [secret])].join('\n')),
);

const mostly = fc.constantFrom(true, true, true, true, false);

/**
 * A config that loads (storePath and one remote), followed by up to three more
 * sections of known keys with plausible or garbage values: from valid through
 * slightly wrong to unparsable.
 */
const configText = fc
  .tuple(mostly, mostly, fc.array(section, { maxLength: 3 }))
  .map(([withStore, withRemote, extra]) =>
    [
      ...(withStore ? ['[replication]', '\tstorePath = store'] : []),
      ...(withRemote ? ['[remote "base"]', '\turl = /srv/git/${name}.git'] : []),
      ...extra,
      '',
    ].join('\n'),
  );

describe('loadConfig on generated replication.config files', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'refrelay-config-prop-'));
    file = join(dir, 'replication.config');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('returns a deep-frozen config with sane numbers, or throws a ConfigError whose every problem has a key', () => {
    const outcomes = { config: 0, error: 0 };
    fc.assert(
      fc.property(configText, (text) => {
        writeFileSync(file, text);
        const result = loadOrError(file);
        if (result instanceof ConfigError) {
          outcomes.error += 1;
          expect(result.code).toBe('CONFIG_INVALID');
          expect(result.problems.length).toBeGreaterThan(0);
          for (const problem of result.problems) {
            expect(problem.file).toBe(file);
            expect(typeof problem.key === 'string' && problem.key !== '').toBe(true);
            expect(problem.key).toMatch(/^(\(file\)|replication|remote|gerrit)(\.|$)/);
            expect(typeof problem.message === 'string' && problem.message !== '').toBe(true);
          }
          return;
        }
        outcomes.config += 1;
        expectDeepFrozen(result);
        expect(result.file).toBe(resolve(file));
        expectSaneNumbers(result);
        for (const warning of result.warnings) expect(warning.key).not.toBe('');
      }),
      { seed: 1001, numRuns: 300 },
    );
    // Both sides must be reached for the property to say anything.
    expect(outcomes.config).toBeGreaterThan(20);
    expect(outcomes.error).toBeGreaterThan(20);
  });

  it('never shows a password or token in problems, warnings, config check output or its JSON', () => {
    fc.assert(
      fc.property(configText, (text) => {
        writeFileSync(file, text);
        const result = loadOrError(file);
        const shown =
          result instanceof ConfigError
            ? [result.message, ...result.problems.map((p) => `${p.key} ${p.message}`)]
            : [describeConfig(result), JSON.stringify(configToJson(result)), ...result.warnings.map((w) => `${w.key} ${w.message}`)];
        for (const output of shown) expect(output).not.toContain(SECRET);
      }),
      { seed: 1002, numRuns: 200 },
    );
  });

  it('reads known keys whatever their case, as git does', () => {
    fc.assert(
      fc.property(anyCase('distributionInterval'), anyCase('storePath'), (intervalKey, storeKey) => {
        writeFileSync(file, `[replication]\n\t${storeKey} = store\n\t${intervalKey} = 7s\n[remote "r"]\n\turl = /srv/\${name}.git\n`);
        const result = loadOrError(file);
        expect(result).not.toBeInstanceOf(ConfigError);
        if (!(result instanceof ConfigError)) expect(result.distributionIntervalMs).toBe(7000);
      }),
      { seed: 1003, numRuns: 20 },
    );
  });
});
