import { describe, expect, it } from 'vitest';
import { basenameNotes } from '../../../src/config/describe-config.js';
import { configToJson, describeConfig, validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { entries } from './config-entries.js';

// Config shapes a Gerrit replication.config may hold, and what Gerrit's plugin made of them.

const PLAIN_FILE = '/opt/refrelay/replication.config';
const BASE = ['replication.storePath=/store', 'remote.m.url=/m/${name}.git'];

function validate(file: string, ...lines: string[]) {
  return validateConfig(entries(...lines), file, 'node-a');
}

function valid(file: string, ...lines: string[]): ReplicationConfig {
  const result = validate(file, ...lines);
  expect(result.problems).toEqual([]);
  if (!result.config) throw new Error('no config');
  return result.config;
}

const warningLines = (config: ReplicationConfig): string[] => config.warnings.map((w) => `${w.key}: ${w.message}`);

describe('remote.NAME.remoteNameStyle', () => {
  it.each(['slash', 'dash', 'underscore', 'basenameOnly'] as const)('takes %s as written, with no warning', (style) => {
    const config = valid(PLAIN_FILE, ...BASE, `remote.m.remoteNameStyle=${style}`);
    expect(config.remotes[0]?.remoteNameStyle).toBe(style);
    expect(config.warnings).toEqual([]);
  });

  it('falls back to slash for a differently cased style, as Gerrit\'s equals() does, suggesting the spelling', () => {
    const config = valid(PLAIN_FILE, ...BASE, 'remote.m.remoteNameStyle=Dash');
    expect(config.remotes[0]?.remoteNameStyle).toBe('slash');
    expect(warningLines(config)).toEqual([
      'remote.m.remoteNameStyle: unknown style "Dash" (did you mean "dash"? styles are case-sensitive); Gerrit falls back to ' +
        'slash for it, and so does refrelay: project names keep their "/". Write slash, dash, underscore or basenameOnly',
    ]);
  });

  it('falls back to slash for an unknown style', () => {
    const config = valid(PLAIN_FILE, ...BASE, 'remote.m.remoteNameStyle=camel');
    expect(config.remotes[0]?.remoteNameStyle).toBe('slash');
    expect(warningLines(config)[0]).toMatch(/^remote\.m\.remoteNameStyle: unknown style "camel"; Gerrit falls back to slash/);
  });

  it('notes, for config check, the exact projects whose basenameOnly name loses a dotted suffix', () => {
    const config = valid(
      PLAIN_FILE, 'replication.storePath=/store', 'remote.gh.url=https://github.com/org/${name}.git', 'remote.gh.remoteNameStyle=basenameOnly',
      'remote.gh.projects=plugins/foo.bar', 'remote.gh.projects=tools/app', 'remote.gh.projects=x/v1.2-release', 'remote.gh.projects=^lib/.*',
    );
    const notes = [
      'basenameOnly pushes project "plugins/foo.bar" as "foo", not "foo.bar": as in Gerrit, the name ends at its last dot',
      'basenameOnly pushes project "x/v1.2-release" as "v1", not "v1.2-release": as in Gerrit, the name ends at its last dot',
    ];
    const [remote] = config.remotes;
    expect(remote && basenameNotes(remote)).toEqual(notes);
    expect(describeConfig(config)).toContain(notes.map((note) => `  note: ${note}\n`).join(''));
    expect((configToJson(config).remotes as Array<{ notes: string[] }>)[0]?.notes).toEqual(notes);
  });

  it('has no notes for another style or for names without a dot', () => {
    const dashed = valid(PLAIN_FILE, ...BASE, 'remote.m.projects=plugins/foo.bar', 'remote.m.remoteNameStyle=dash');
    const plain = valid(PLAIN_FILE, ...BASE, 'remote.m.projects=plugins/foo', 'remote.m.remoteNameStyle=basenameOnly');
    for (const config of [dashed, plain]) expect(describeConfig(config)).not.toContain('note:');
  });
});
