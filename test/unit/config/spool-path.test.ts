import { describe, expect, it } from 'vitest';
import { spoolPathFor } from '../../../src/config/spool-path.js';

describe('where enqueue spools', () => {
  const user = { xdgStateHome: undefined, root: false, home: '/home/dev' };

  it('uses replication.spoolPath when it is set, whoever runs it', () => {
    expect(spoolPathFor('/srv/spool', { ...user, root: true, xdgStateHome: '/x' })).toBe('/srv/spool');
  });

  it('else $XDG_STATE_HOME/refrelay/spool, for root too', () => {
    expect(spoolPathFor(undefined, { ...user, xdgStateHome: '/state' })).toBe('/state/refrelay/spool');
    expect(spoolPathFor(undefined, { ...user, root: true, xdgStateHome: '/state' })).toBe('/state/refrelay/spool');
  });

  it('else /var/spool/refrelay for root and ~/.local/state/refrelay/spool for anyone else', () => {
    expect(spoolPathFor(undefined, { ...user, root: true })).toBe('/var/spool/refrelay');
    expect(spoolPathFor(undefined, user)).toBe('/home/dev/.local/state/refrelay/spool');
  });

  it('ignores an empty or relative XDG_STATE_HOME, as the XDG spec says', () => {
    expect(spoolPathFor(undefined, { ...user, xdgStateHome: '' })).toBe('/home/dev/.local/state/refrelay/spool');
    expect(spoolPathFor(undefined, { ...user, xdgStateHome: 'state' })).toBe('/home/dev/.local/state/refrelay/spool');
  });
});
