import { describe, expect, it } from 'vitest';
import { REMOTE_GIT_ONLY } from '../../../src/config/config-keys.js';
import { basenameNotes } from '../../../src/config/describe-config.js';
import { configToJson, describeConfig, validateConfig } from '../../../src/config/load-config.js';
import { skipReason } from '../../../src/config/push-targets.js';
import { gerritSiteOf } from '../../../src/config/store-path.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { entries } from './config-entries.js';

// Config shapes a Gerrit replication.config may hold, and what Gerrit's plugin made of them.

const SITE_FILE = '/var/gerrit/etc/replication.config';
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

const NO_URL = 'not set, so the remote is skipped, as Gerrit skips it; add url = <destination>/${name}.git to replicate to it';
const FETCH =
  'set, so the remote is skipped: Gerrit takes a remote with a fetch refspec for a fetch remote ("not a push target") ' +
  'and skips it; remove fetch to replicate to it';

describe('remotes Gerrit does not push to', () => {
  it('skips a remote without url with a warning naming it, without checking its other values', () => {
    const config = valid(PLAIN_FILE, ...BASE, 'remote.draft.projects=a', 'remote.draft.threads=many');
    expect(config.remotes.map((r) => r.name)).toEqual(['m']);
    expect(warningLines(config)).toEqual([`remote.draft.url: ${NO_URL}`]);
  });

  it('skips a remote with a fetch refspec, url or not, as "not a push target"', () => {
    const config = valid(
      PLAIN_FILE,
      ...BASE,
      'remote.origin.url=https://git.example.com/${name}.git',
      'remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*',
    );
    expect(config.remotes.map((r) => r.name)).toEqual(['m']);
    expect(warningLines(config)).toEqual([`remote.origin.fetch: ${FETCH}`]);
  });

  it('gives the missing url as the reason before a fetch refspec', () => {
    expect(skipReason(new Map([['fetch', ['refs/*:refs/*']]]))).toEqual({ key: 'url', message: NO_URL });
    expect(skipReason(new Map([['url', ['/x/${name}']]]))).toBeUndefined();
  });

  it('loads a config whose only remotes are skipped, with no remote to push to', () => {
    const config = valid(PLAIN_FILE, 'replication.storePath=/store', 'remote.origin.url=/o/${name}', 'remote.origin.fetch=refs/*:refs/*');
    expect(config.remotes).toEqual([]);
  });

  it('accepts pushurl and tagOpt with a warning each and pushes to url only', () => {
    const config = valid(PLAIN_FILE, ...BASE, 'remote.m.pushurl=/elsewhere/${name}.git', 'remote.m.tagopt=--no-tags');
    expect(config.remotes[0]?.urls).toEqual(['/m/${name}.git']);
    expect(warningLines(config)).toEqual([`remote.m.pushurl: ${REMOTE_GIT_ONLY.pushurl}`, `remote.m.tagOpt: ${REMOTE_GIT_ONLY.tagOpt}`]);
    expect(REMOTE_GIT_ONLY.pushurl).toContain('write the address as url');
  });
});

describe('replication.distributionInterval', () => {
  it("takes 0, Gerrit's default, as the default interval with a warning saying refrelay always distributes", () => {
    for (const zero of ['0', '0s', '0ms']) {
      const config = valid(PLAIN_FILE, ...BASE, `replication.distributionInterval=${zero}`);
      expect(config.distributionIntervalMs).toBe(10_000);
      expect(warningLines(config)).toEqual([
        "replication.distributionInterval: 0 turns Gerrit's distributor off (its default), so each primary pushes only what " +
          'it queued; refrelay nodes always share their queue through the store, so the default 10s is used. Remove the key, ' +
          'or set how often each node should list waiting/',
      ]);
    }
  });

  it('keeps a positive interval and refuses what is no duration', () => {
    expect(valid(PLAIN_FILE, ...BASE, 'replication.distributionInterval=3').distributionIntervalMs).toBe(3000);
    expect(validate(PLAIN_FILE, ...BASE, 'replication.distributionInterval=-1').problems.map((p) => p.key)).toEqual(['replication.distributionInterval']);
  });
});

describe('remote.NAME.remoteNameStyle', () => {
  it.each(['slash', 'dash', 'underscore', 'basenameOnly'] as const)('takes %s as written, with no warning', (style) => {
    const config = valid(PLAIN_FILE, ...BASE, `remote.m.remoteNameStyle=${style}`);
    expect(config.remotes[0]?.remoteNameStyle).toBe(style);
    expect(config.warnings).toEqual([]);
  });

  it("falls back to slash for a differently cased style, as Gerrit's equals() does, suggesting the spelling", () => {
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
      PLAIN_FILE,
      'replication.storePath=/store',
      'remote.gh.url=https://github.com/org/${name}.git',
      'remote.gh.remoteNameStyle=basenameOnly',
      'remote.gh.projects=plugins/foo.bar',
      'remote.gh.projects=tools/app',
      'remote.gh.projects=x/v1.2-release',
      'remote.gh.projects=^lib/.*',
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

describe('where the store is', () => {
  it('resolves a relative eventsDirectory against the Gerrit site when the file sits in etc/, as Gerrit does', () => {
    const config = valid(SITE_FILE, 'replication.eventsDirectory=data/replication', 'remote.m.url=/m/${name}');
    expect(config.storePath).toBe('/var/gerrit/data/replication');
    expect(config.storePathFrom).toEqual({ key: 'eventsDirectory', written: 'data/replication', relativeTo: '/var/gerrit', gerritSite: true });
    expect(describeConfig(config)).toContain(
      'storePath: /var/gerrit/data/replication (eventsDirectory "data/replication" taken from the Gerrit site /var/gerrit, as Gerrit does)\n',
    );
    expect(configToJson(config).storePathFrom).toEqual(config.storePathFrom);
  });

  it("keeps a relative storePath, refrelay's own key, beside the config file even in etc/", () => {
    const config = valid(SITE_FILE, 'replication.storePath=store', 'remote.m.url=/m/${name}');
    expect(config.storePath).toBe('/var/gerrit/etc/store');
    expect(describeConfig(config)).toContain('storePath: /var/gerrit/etc/store (storePath "store" taken from the config file\'s folder /var/gerrit/etc)\n');
  });

  it("resolves a relative eventsDirectory against the config file's folder outside a Gerrit site", () => {
    expect(valid(PLAIN_FILE, 'replication.eventsDirectory=data', 'remote.m.url=/m/${name}').storePath).toBe('/opt/refrelay/data');
    expect(valid('/etc/replication.config', 'replication.eventsDirectory=data', 'remote.m.url=/m/${name}').storePath).toBe('/etc/data');
  });

  it('says nothing about an absolute path', () => {
    const config = valid(SITE_FILE, 'replication.eventsDirectory=/mnt/shared/events', 'remote.m.url=/m/${name}');
    expect(config.storePath).toBe('/mnt/shared/events');
    expect(config.storePathFrom).toBeUndefined();
    expect(describeConfig(config)).toContain('storePath: /mnt/shared/events\n');
    expect(configToJson(config).storePathFrom).toBeNull();
  });

  it("takes a Gerrit site only from a folder named etc that is not the system's /etc", () => {
    expect(gerritSiteOf('/var/gerrit/etc')).toBe('/var/gerrit');
    expect(gerritSiteOf('/etc')).toBeUndefined();
    expect(gerritSiteOf('/var/gerrit/etc2')).toBeUndefined();
    expect(gerritSiteOf('/var/gerrit')).toBeUndefined();
  });

  it('treats an empty eventsDirectory as not set, as Gerrit does, and says what to add', () => {
    const result = validate(SITE_FILE, 'replication.eventsDirectory=', 'remote.m.url=/m/${name}');
    expect(result.problems.map((p) => `${p.key}: ${p.message}`)).toEqual([
      "replication.storePath: not set, nor eventsDirectory. Gerrit then keeps its queue in the plugin's data folder, one per " +
        'primary; refrelay nodes share one store, and refrelay cannot guess a folder they all mount. Add under [replication]: ' +
        'storePath = /mnt/shared/refrelay (a folder every node mounts)',
    ]);
  });
});
