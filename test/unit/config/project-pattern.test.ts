import { describe, expect, it } from 'vitest';
import { parseConfiguredProjectPattern, parseProjectPattern, remoteWantsProject } from '../../../src/config/project-pattern.js';
import type { ProjectPattern } from '../../../src/config/types.js';

function pattern(text: string): ProjectPattern {
  const parsed = parseProjectPattern(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('parseProjectPattern', () => {
  it('matches an exact name only', () => {
    const p = pattern('team/app');
    expect(p.kind).toBe('exact');
    expect(p.matches('team/app')).toBe(true);
    expect(p.matches('team/app2')).toBe(false);
    expect(p.matches('other/team/app')).toBe(false);
  });

  it('treats a trailing * as a prefix', () => {
    const p = pattern('team/*');
    expect(p.kind).toBe('prefix');
    expect(p.matches('team/a')).toBe(true);
    expect(p.matches('team/a/b')).toBe(true);
    expect(p.matches('teamx/a')).toBe(false);
  });

  it('lets * alone match every project', () => {
    const p = pattern('*');
    expect(p.matches('anything')).toBe(true);
    expect(p.matches('a/b/c')).toBe(true);
  });

  it('requires a ^regex to match the whole name', () => {
    const p = pattern('^team/(a|b)');
    expect(p.kind).toBe('regex');
    expect(p.matches('team/a')).toBe(true);
    expect(p.matches('team/b')).toBe(true);
    expect(p.matches('team/ab')).toBe(false);
    expect(p.matches('xteam/a')).toBe(false);
  });

  it('keeps top-level alternation inside the whole-name anchor', () => {
    const p = pattern('^a|b');
    expect(p.matches('a')).toBe(true);
    expect(p.matches('b')).toBe(true);
    expect(p.matches('ab')).toBe(false);
  });

  it('takes a * elsewhere than at the end literally, as Gerrit does', () => {
    const p = pattern('a*b');
    expect(p.kind).toBe('exact');
    expect(p.matches('a*b')).toBe(true);
    expect(p.matches('axb')).toBe(false);
  });

  it('reads the regex as Java does: ASCII-only \\w, \\Q quoting, && in classes', () => {
    const p = pattern('^team/\\w+/\\Qv1.0\\E/[a-z&&[^x]]+');
    expect(p.matches('team/app_1/v1.0/abc')).toBe(true);
    expect(p.matches('team/caf\u00e9/v1.0/abc')).toBe(false);
    expect(p.matches('team/app/v1x0/abc')).toBe(false);
    expect(p.matches('team/app/v1.0/xyz')).toBe(false);
  });

  it("reports an invalid regex with Java's reason", () => {
    expect(parseProjectPattern('^team/[')).toBe('invalid regular expression "^team/[": Unclosed character class near index 6');
  });

  it('says, for a config key, what Gerrit did with an invalid regex', () => {
    expect(parseConfiguredProjectPattern('^team/[')).toBe(
      'invalid regular expression "^team/[": Unclosed character class near index 6; ' +
        'Gerrit failed with PatternSyntaxException whenever it checked a project against it; fix the expression',
    );
  });

  it('refuses a regex Gerrit accepts but refrelay cannot match alike, saying so', () => {
    expect(parseConfiguredProjectPattern('^(team)/\\1')).toBe(
      'regular expression "^(team)/\\\\1": the backreference \\1 cannot be matched exactly as Java does ' +
        '(Java fails it when the group did not take part); rewrite the pattern without it ' +
        '(Gerrit accepts it; refrelay refuses it rather than replicate other projects than Gerrit would)',
    );
  });

  it('rejects an empty pattern', () => {
    expect(parseProjectPattern('')).toBe('empty project pattern');
  });
});

describe('remoteWantsProject', () => {
  const remote = (projects: string[], excludeProjects: string[] = []) => ({ projects: projects.map(pattern), excludeProjects: excludeProjects.map(pattern) });

  it('wants every project when no projects filter is set', () => {
    expect(remoteWantsProject(remote([]), 'any/thing')).toBe(true);
  });

  it('wants a project matching any of the projects filters', () => {
    const r = remote(['team/*', '^lib-.*', 'tools']);
    expect(remoteWantsProject(r, 'team/x')).toBe(true);
    expect(remoteWantsProject(r, 'lib-core')).toBe(true);
    expect(remoteWantsProject(r, 'tools')).toBe(true);
    expect(remoteWantsProject(r, 'other')).toBe(false);
  });

  it('lets excludeProjects override projects', () => {
    const r = remote(['team/*'], ['team/secret', '^team/archive/.*']);
    expect(remoteWantsProject(r, 'team/app')).toBe(true);
    expect(remoteWantsProject(r, 'team/secret')).toBe(false);
    expect(remoteWantsProject(r, 'team/archive/2019')).toBe(false);
  });

  it('excludes from all projects when only excludeProjects is set', () => {
    const r = remote([], ['private/*']);
    expect(remoteWantsProject(r, 'public/a')).toBe(true);
    expect(remoteWantsProject(r, 'private/a')).toBe(false);
  });
});
