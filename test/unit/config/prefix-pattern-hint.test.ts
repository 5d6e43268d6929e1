import { describe, expect, it } from 'vitest';
import { compileJavaRegex, isJavaRegexProblem } from '../../../src/config/java-regex.js';
import { prefixPatternHint } from '../../../src/config/prefix-pattern-hint.js';

const NO_REF = 'the pattern must match the whole ref name, as in Gerrit, and no ref name ends in "/"';
const NO_PROJECT = 'a ^regex must match the whole project name, as in Gerrit, and no project name ends in "/"';

describe('prefixPatternHint for excludedRefsPattern', () => {
  it.each([
    ['^refs/heads/wip/', '^refs/heads/wip/.*'],
    ['refs/heads/wip/', 'refs/heads/wip/.*'],
    ['^refs/heads/wip/$', '^refs/heads/wip/.*$'],
    ['refs/heads/wip/+', 'refs/heads/wip/+.*'],
    ['refs/heads/(wip|tmp)/', 'refs/heads/(wip|tmp)/.*'],
    ['refs/heads/(wip/|tmp/)', 'refs/heads/(wip/|tmp/).*'],
    ['refs/heads/wip\\/', 'refs/heads/wip\\/.*'],
    ['\\Qrefs/heads/wip/\\E', '\\Qrefs/heads/wip/\\E.*'],
    ['\\Qrefs/heads/wip/', '\\Qrefs/heads/wip/\\E.*'],
    ['(?i)refs/heads/WIP/', '(?i)refs/heads/WIP/.*'],
    ['refs/[a-z]+/wip/', 'refs/[a-z]+/wip/.*'],
    ['refs/heads/[]/]/', 'refs/heads/[]/]/.*'],
  ])('flags %s, which matches no ref, and suggests %s', (pattern, fixed) => {
    expect(prefixPatternHint('excludedRefsPattern', pattern)).toBe(
      `"${pattern}" matches no ref: ${NO_REF}; to exclude the refs under it, append .*: "${fixed}"`,
    );
  });

  it('flags a pattern that matches only a ref folder such as refs/tags, suggesting /.*', () => {
    expect(prefixPatternHint('excludedRefsPattern', '^refs/tags')).toBe(
      '"^refs/tags" matches only a ref named exactly "refs/tags", never one under refs/tags/: ' +
        'the pattern must match the whole ref name, as in Gerrit; to exclude the refs under it, append /.*: "^refs/tags/.*"',
    );
  });

  it('names the alternative that matches no ref, and fixes only that one', () => {
    expect(prefixPatternHint('excludedRefsPattern', 'refs/heads/wip/|refs/tags/old-.*')).toBe(
      '"refs/heads/wip/|refs/tags/old-.*": its alternative "refs/heads/wip/" matches no ref: ' +
        `${NO_REF}; to exclude the refs under it, append .*: "refs/heads/wip/.*|refs/tags/old-.*"`,
    );
    expect(prefixPatternHint('excludedRefsPattern', '^refs/heads/a/|^refs/heads/b/')).toBe(
      '"^refs/heads/a/|^refs/heads/b/": its alternatives "^refs/heads/a/" and "^refs/heads/b/" match no ref: ' +
        `${NO_REF}; to exclude the refs under it, append .*: "^refs/heads/a/.*|^refs/heads/b/.*"`,
    );
  });

  it.each([
    'refs/meta/config',
    '^refs/meta/config$',
    'refs/heads/wip',
    '^refs/heads/wip/.*',
    'refs/heads/wip/.+',
    'refs/heads/wip/?',
    'refs/heads/wip/*',
    'refs/heads/wip/{0,1}',
    'refs/heads/(wip/|tmp)',
    'refs/heads/wip/[a-z]',
    'refs/stash',
    '(?i)refs/tags',
    'refs/tags|refs/tags/.*',
    'refs/heads|refs/tags',
    'refs/heads/wip\\x2F',
    'refs/heads/wip\\u002F',
    'refs/heads/wip/\\Q\\E.*',
    '(?x)refs/heads/wip/ # a comment',
    'refs/heads/wip/\\Q.*\\E',
  ])('leaves %s alone: it can match a ref name, or is read no further', (pattern) => {
    expect(prefixPatternHint('excludedRefsPattern', pattern)).toBeUndefined();
  });

  it('suggests only fixes that compile and match a name under the prefix', () => {
    for (const pattern of ['^refs/heads/wip/', '\\Qrefs/heads/wip/', 'refs/heads/(wip|tmp)/', '^refs/tags']) {
      const message = prefixPatternHint('excludedRefsPattern', pattern) ?? '';
      const fixed = /: "([^"]*)"$/.exec(message)?.[1] ?? '';
      const compiled = compileJavaRegex(fixed);
      if (isJavaRegexProblem(compiled)) throw new Error(compiled.message);
      expect([pattern, compiled.matches(pattern.includes('tags') ? 'refs/tags/v1' : 'refs/heads/wip/x')]).toEqual([pattern, true]);
    }
  });
});

describe('prefixPatternHint for project patterns', () => {
  it('flags a ^regex that ends in "/", saying to append .*', () => {
    expect(prefixPatternHint('projects', '^team/')).toBe(`"^team/" matches no project: ${NO_PROJECT}; to select the projects under it, append .*: "^team/.*"`);
    expect(prefixPatternHint('excludeProjects', '^(team|ops)/')).toBe(
      `"^(team|ops)/" matches no project: ${NO_PROJECT}; to exclude the projects under it, append .*: "^(team|ops)/.*"`,
    );
  });

  it('flags an exact name that ends in "/", saying to append *', () => {
    expect(prefixPatternHint('projects', 'team/')).toBe(
      '"team/" matches no project: a name without * or ^ is one exact project name, and none ends in "/"; to select the projects under it, append *: "team/*"',
    );
  });

  it.each(['^team/app', '^team/.*', 'team/app', 'team/*', '^refs/tags', '^lib-[a-z]+'])('leaves %s alone', (pattern) => {
    expect(prefixPatternHint('projects', pattern)).toBeUndefined();
    expect(prefixPatternHint('excludeProjects', pattern)).toBeUndefined();
  });
});
