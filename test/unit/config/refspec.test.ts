import { describe, expect, it } from 'vitest';
import { defaultPushRefspec, mapRefThroughRefspecs, parseRefspec } from '../../../src/config/refspec.js';
import type { Refspec } from '../../../src/config/types.js';

function spec(text: string): Refspec {
  const parsed = parseRefspec(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

describe('parseRefspec', () => {
  it('reads a forced wildcard refspec', () => {
    expect(parseRefspec('+refs/heads/*:refs/heads/*')).toEqual({ force: true, src: 'refs/heads/*', dst: 'refs/heads/*', text: '+refs/heads/*:refs/heads/*' });
  });

  it('reads an exact, not forced refspec that renames', () => {
    expect(parseRefspec('refs/heads/master:refs/heads/main')).toEqual({
      force: false,
      src: 'refs/heads/master',
      dst: 'refs/heads/main',
      text: 'refs/heads/master:refs/heads/main',
    });
  });

  it('treats a refspec without a colon as pushing the ref under its own name, like git push', () => {
    expect(parseRefspec('refs/tags/*')).toMatchObject({ src: 'refs/tags/*', dst: 'refs/tags/*', force: false });
  });

  it('accepts a wildcard in the middle of a component, as git does', () => {
    expect(parseRefspec('refs/heads/release-*:refs/heads/rel-*')).toMatchObject({ src: 'refs/heads/release-*' });
  });

  it.each([
    ['heads/main:refs/heads/main', 'source "heads/main" must start with refs/'],
    ['refs/heads/main:main', 'destination "main" must start with refs/'],
    ['refs/heads/*:refs/heads/main', 'source and destination must both have one "*" or neither'],
    ['refs/heads/main:refs/heads/*', 'source and destination must both have one "*" or neither'],
    ['refs/*/x/*:refs/*', 'source "refs/*/x/*" has more than one "*"'],
    ['refs/heads/a..b:refs/heads/c', 'source "refs/heads/a..b" contains ".."'],
    ['refs/heads//a:refs/heads/a', 'source "refs/heads//a" has an empty path component'],
    ['refs/heads/a b:refs/heads/a', 'source "refs/heads/a b" contains a character git forbids in ref names'],
    ['refs/heads/x.lock:refs/heads/x', 'source "refs/heads/x.lock" has a component that starts with "." or ends with ".lock" or "."'],
    ['refs/a:refs/b:refs/c', 'more than one ":"'],
    [':refs/heads/gone', 'empty source (deleting refs by refspec is not supported)'],
    ['refs/heads/a:', 'empty destination'],
    ['+', 'empty'],
    ['^refs/heads/secret', 'negative refspecs are not supported; use excludedRefsPattern'],
  ])('rejects %j', (text, reason) => {
    expect(parseRefspec(text)).toBe(`invalid refspec "${text}": ${reason}`);
  });
});

describe('mapRefThroughRefspecs', () => {
  it('maps a ref through a wildcard refspec, keeping the matched part', () => {
    expect(mapRefThroughRefspecs([spec('refs/heads/*:refs/heads/mirror/*')], 'refs/heads/feature/x')).toEqual({
      dst: 'refs/heads/mirror/feature/x',
      force: false,
    });
  });

  it('maps with a wildcard in mid-component', () => {
    expect(mapRefThroughRefspecs([spec('refs/heads/release-*:refs/tags/v*')], 'refs/heads/release-1.2')).toEqual({ dst: 'refs/tags/v1.2', force: false });
  });

  it('matches an exact refspec only on the exact ref', () => {
    const specs = [spec('+refs/heads/master:refs/heads/main')];
    expect(mapRefThroughRefspecs(specs, 'refs/heads/master')).toEqual({ dst: 'refs/heads/main', force: true });
    expect(mapRefThroughRefspecs(specs, 'refs/heads/master2')).toBeUndefined();
  });

  it('returns undefined when no refspec matches', () => {
    expect(mapRefThroughRefspecs([spec('refs/heads/*:refs/heads/*')], 'refs/tags/v1')).toBeUndefined();
    expect(mapRefThroughRefspecs([], 'refs/heads/main')).toBeUndefined();
  });

  it('lets the first matching refspec win', () => {
    const specs = [spec('refs/heads/main:refs/heads/stable'), spec('+refs/heads/*:refs/heads/*')];
    expect(mapRefThroughRefspecs(specs, 'refs/heads/main')).toEqual({ dst: 'refs/heads/stable', force: false });
    expect(mapRefThroughRefspecs(specs, 'refs/heads/dev')).toEqual({ dst: 'refs/heads/dev', force: true });
  });

  it('copies "$&"-like sequences in ref names literally', () => {
    expect(mapRefThroughRefspecs([spec('refs/heads/*:refs/b/*')], 'refs/heads/$&x')?.dst).toBe('refs/b/$&x');
  });

  it('does not let a wildcard match an empty part', () => {
    expect(mapRefThroughRefspecs([spec('refs/heads/*:refs/heads/*')], 'refs/heads/')).toBeUndefined();
  });
});

describe('defaultPushRefspec', () => {
  it('pushes every ref under its own name, forced only when asked', () => {
    expect(defaultPushRefspec(false)).toEqual({ force: false, src: 'refs/*', dst: 'refs/*', text: 'refs/*:refs/*' });
    expect(defaultPushRefspec(true)).toEqual({ force: true, src: 'refs/*', dst: 'refs/*', text: '+refs/*:refs/*' });
  });
});
