import type { Reporter, SectionValues } from './collect-sections.js';

/**
 * Why Gerrit's replication plugin (DestinationConfigParser) passes over a `[remote "NAME"]`
 * section, or undefined when it is a push target. A replication.config may hold remotes meant
 * for plain git (a fetch remote, a half-written one); Gerrit loads the file anyway and pushes
 * only to the others, so refrelay must too instead of refusing the whole file.
 */
export function skipReason(values: SectionValues): { key: string; message: string } | undefined {
  if (!values.has('url')) {
    return { key: 'url', message: 'not set, so the remote is skipped, as Gerrit skips it; add url = <destination>/${name}.git to replicate to it' };
  }
  if (values.has('fetch')) {
    return {
      key: 'fetch',
      message:
        'set, so the remote is skipped: Gerrit takes a remote with a fetch refspec for a fetch remote ' +
        '("not a push target") and skips it; remove fetch to replicate to it',
    };
  }
  return undefined;
}

/** The remotes refrelay pushes to, in file order; every other one gets a warning naming it and why. */
export function pushTargets(remotes: ReadonlyMap<string, SectionValues>, report: Reporter): Map<string, SectionValues> {
  const targets = new Map<string, SectionValues>();
  for (const [name, values] of remotes) {
    const skip = skipReason(values);
    if (skip === undefined) targets.set(name, values);
    else report.warning(`remote.${name}.${skip.key}`, skip.message);
  }
  return targets;
}
