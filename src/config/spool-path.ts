import { isAbsolute, join } from 'node:path';

/** What the default spool folder depends on; the CLI and the daemon pass the real process's. */
export interface SpoolPathInputs {
  readonly xdgStateHome: string | undefined;
  /** True when the process runs as root (uid 0). */
  readonly root: boolean;
  readonly home: string;
}

/**
 * Where updates go that `enqueue` cannot write to the store: `replication.spoolPath` when set,
 * else `$XDG_STATE_HOME/refrelay/spool`, else `/var/spool/refrelay` for root (hooks of a system
 * git server), else `~/.local/state/refrelay/spool`. XDG says a relative `XDG_STATE_HOME` is
 * invalid and to be ignored. Pure.
 */
export function spoolPathFor(configured: string | undefined, inputs: SpoolPathInputs): string {
  if (configured !== undefined) return configured;
  const xdg = inputs.xdgStateHome;
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'refrelay', 'spool');
  if (inputs.root) return '/var/spool/refrelay';
  return join(inputs.home, '.local', 'state', 'refrelay', 'spool');
}
