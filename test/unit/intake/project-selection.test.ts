import { describe, expect, it } from 'vitest';
import { parseProjectPattern } from '../../../src/config/project-pattern.js';
import type { ProjectPattern } from '../../../src/config/types.js';
import { describeUnmatched, selectProjects } from '../../../src/intake/project-selection.js';

const patterns = (...texts: string[]): ProjectPattern[] => texts.map((text) => parseProjectPattern(text) as ProjectPattern);
const projects = ['app', 'team/api', 'team/web'];

describe('selectProjects', () => {
  it('selects every project when no pattern is given', () => {
    expect(selectProjects(projects, [])).toEqual({ selected: projects, unmatched: [] });
  });

  it('selects what any pattern matches and names each pattern that matched nothing', () => {
    const selection = selectProjects(projects, patterns('app', 'team/w*', 'nosuch', 'other/*', '^x.*'));
    expect(selection.selected).toEqual(['app', 'team/web']);
    expect(selection.unmatched.map((pattern) => pattern.text)).toEqual(['nosuch', 'other/*', '^x.*']);
  });

  it('says "no project" for an exact name and "matched no project" for a prefix or regex', () => {
    expect(describeUnmatched(patterns('nosuch'))).toBe('no project "nosuch"');
    expect(describeUnmatched(patterns('nosuch', 'other/*', '^x.*'))).toBe('no project "nosuch"; "other/*" matched no project; "^x.*" matched no project');
  });
});
