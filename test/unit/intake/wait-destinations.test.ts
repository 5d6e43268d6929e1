import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { waitDestinations } from '../../../src/intake/wait-destinations.js';
import { entries } from '../config/config-entries.js';

function config(...lines: string[]): ReplicationConfig {
  const result = validateConfig(entries('replication.storePath=/store', ...lines), '/etc/refrelay/replication.config', 'node-a');
  if (!result.config) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const SITE = config(
  'remote.dr.url=/dr/${name}.git',
  'remote.dr.url=/dr2/${name}.git',
  'remote.ci.url=git://ci/${name}.git',
  'remote.ci.push=refs/heads/*:refs/heads/mirror/*',
  'remote.ci.projects=app',
  'remote.docs.url=/docs/${name}.git',
  'remote.docs.projects=docs',
);

const shown = (found: ReturnType<typeof waitDestinations>): unknown =>
  typeof found === 'string' ? found : found.map(({ remote, uri, ref }) => [remote.name, uri, ref]);

describe('the destinations refrelay wait follows', () => {
  it('by default every URL of every remote that replicates the ref, with the name the refspec gives it there', () => {
    expect(shown(waitDestinations(SITE, 'app', 'refs/heads/main', []))).toEqual([
      ['dr', '/dr/app.git', 'refs/heads/main'],
      ['dr', '/dr2/app.git', 'refs/heads/main'],
      ['ci', 'git://ci/app.git', 'refs/heads/mirror/main'],
    ]);
  });

  it('leaves out, unasked, a remote whose refspecs do not take the ref', () => {
    expect(shown(waitDestinations(SITE, 'app', 'refs/tags/v1', []))).toEqual([
      ['dr', '/dr/app.git', 'refs/tags/v1'],
      ['dr', '/dr2/app.git', 'refs/tags/v1'],
    ]);
  });

  it('refuses a named remote that would never receive the ref, and says why', () => {
    expect(waitDestinations(SITE, 'app', 'refs/heads/main', ['docs'])).toBe(
      'remote "docs" does not replicate refs/heads/main of app: its projects/excludeProjects do not take "app"',
    );
    expect(waitDestinations(SITE, 'app', 'refs/tags/v1', ['ci'])).toBe(
      'remote "ci" does not replicate refs/tags/v1 of app: none of its push refspecs takes refs/tags/v1',
    );
    expect(waitDestinations(SITE, 'app', 'refs/cache-automerge/ab/cd', ['dr'])).toBe(
      'remote "dr" does not replicate refs/cache-automerge/ab/cd of app: refs/cache-automerge/* is never replicated',
    );
  });

  it('refuses an unknown remote, and a ref no remote replicates', () => {
    expect(waitDestinations(SITE, 'app', 'refs/heads/main', ['dr', 'nope'])).toBe('no remote named "nope" in /etc/refrelay/replication.config');
    expect(waitDestinations(SITE, 'other', 'refs/tags/v1', ['ci'])).toBe(
      'remote "ci" does not replicate refs/tags/v1 of other: its projects/excludeProjects do not take "other"',
    );
    expect(waitDestinations(SITE, 'app', 'refs/cache-automerge/ab/cd', [])).toBe(
      'no remote in /etc/refrelay/replication.config replicates refs/cache-automerge/ab/cd of app',
    );
  });
});
