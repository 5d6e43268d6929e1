import { describe, expect, it } from 'vitest';
import { createReporter } from '../../../src/config/collect-sections.js';
import { dropMainRemotes, fanoutRemoteEntries } from '../../../src/config/fanout-remotes.js';
import { splitBySeparator } from '../../../src/config/read-fanout.js';
import { formatConfigProblem } from '../../../src/errors.js';
import { entries } from './config-entries.js';

const DIR = '/etc/gerrit/replication';

function fanout(name: string, ...lines: string[]) {
  const file = `${DIR}/${name}`;
  const report = createReporter(file);
  const result = fanoutRemoteEntries({ file, entries: entries(...lines), problems: [] }, 'replication.config', report);
  return { entries: result, warnings: report.warnings.map(formatConfigProblem), problems: report.problems };
}

describe('a fan-out file, as Gerrit reads it', () => {
  it('names its unnamed [remote] section after the file, dots included', () => {
    const read = fanout('eu.mirror.config', 'remote.url=/srv/eu/${name}.git', 'remote.threads=2');
    expect(read.entries.map((e) => [e.section, e.subsection, e.name, e.value])).toEqual([
      ['remote', 'eu.mirror', 'url', '/srv/eu/${name}.git'],
      ['remote', 'eu.mirror', 'threads', '2'],
    ]);
    expect(read.warnings).toEqual([]);
  });

  it('is skipped as a whole when it names its remote section, with a warning naming file and section', () => {
    const read = fanout('a.config', 'remote.url=/srv/a/${name}.git', 'remote.b.url=/srv/b/${name}.git');
    expect(read.entries).toEqual([]);
    expect(read.warnings).toEqual([
      `${DIR}/a.config: remote.b: file ignored: Gerrit skips a file of the fan-out folder with a named remote section (logging an error), since the file name names the remote; write [remote] instead of [remote "b"], one remote per file`,
    ]);
    expect(read.problems).toEqual([]);
  });

  it('is skipped as a whole when it holds any other section, saying where that section belongs', () => {
    const read = fanout('a.config', 'remote.url=/srv/a/${name}.git', 'gerrit.autoReload=true', 'branch.main.merge=x');
    expect(read.entries).toEqual([]);
    expect(read.warnings).toEqual([
      `${DIR}/a.config: gerrit: file ignored: Gerrit skips a file of the fan-out folder with any section but [remote] (logging an error); move [gerrit] to replication.config`,
      `${DIR}/a.config: branch.main: file ignored: Gerrit skips a file of the fan-out folder with any section but [remote] (logging an error); delete [branch.main]`,
    ]);
  });

  it('defines no remote when it sets nothing, and says so', () => {
    const read = fanout('empty.config');
    expect(read.entries).toEqual([]);
    expect(read.warnings).toEqual([
      `${DIR}/empty.config: (file): file ignored: it sets nothing in a [remote] section, so it defines no remote (Gerrit skips it too)`,
    ]);
  });

  it('defines no remote when the file name gives no name', () => {
    const read = fanout('.config', 'remote.url=/srv/x/${name}.git');
    expect(read.entries).toEqual([]);
    expect(read.warnings).toEqual([`${DIR}/.config: (file): file ignored: the file name names the remote, and ".config" names none; rename it NAME.config`]);
  });
});

describe('the remotes of replication.config beside a fan-out folder', () => {
  it('are dropped with one warning per section saying where to move them; other sections stay', () => {
    const report = createReporter('/etc/gerrit/replication.config');
    const kept = dropMainRemotes(
      entries('replication.storePath=/s', 'remote.old.url=/srv/old/${name}.git', 'remote.old.threads=2', 'gerrit.autoReload=true', 'remote.url=/x'),
      DIR,
      report,
    );
    expect(kept.map((e) => `${e.section}.${e.name}`)).toEqual(['replication.storepath', 'gerrit.autoreload']);
    expect(report.warnings.map(formatConfigProblem)).toEqual([
      `/etc/gerrit/replication.config: remote.old: section ignored: ${DIR}/ exists, so the remotes come only from its *.config files (Gerrit ignores this section too, logging an error); move it to ${DIR}/old.config as [remote], or delete it`,
      `/etc/gerrit/replication.config: remote: section ignored: ${DIR}/ exists, so the remotes come only from its *.config files (Gerrit ignores this section too, logging an error); move it to ${DIR}/NAME.config as [remote], or delete it`,
    ]);
    expect(report.problems).toEqual([]);
  });
});

describe('splitting one git read of several files', () => {
  const TAG = 'f00d';
  const separator = (index: number) => entries(`refrelay-fanout-file.${TAG}.${index}.start=true`);

  it('gives each file the entries after its separator, and an empty list to a file without any', () => {
    const listed = [...separator(0), ...entries('remote.url=/a'), ...separator(3), ...separator(5), ...entries('remote.url=/c', 'remote.threads=2')];
    const split = splitBySeparator(listed, TAG);
    expect([...split.keys()]).toEqual([0, 3, 5]);
    expect(split.get(0)?.map((e) => e.value)).toEqual(['/a']);
    expect(split.get(3)).toEqual([]);
    expect(split.get(5)?.map((e) => e.value)).toEqual(['/c', '2']);
  });

  it('leaves out a file with keys before its first section, so that it is read alone', () => {
    const listed = [...separator(0), ...entries(`refrelay-fanout-file.${TAG}.0.url=/stray`, 'remote.url=/a'), ...separator(1), ...entries('remote.url=/b')];
    const split = splitBySeparator(listed, TAG);
    expect([...split.keys()]).toEqual([1]);
  });

  it('takes a separator of another tag for a section of the file', () => {
    const listed = [...separator(0), ...entries('refrelay-fanout-file.other.1.start=true', 'remote.url=/a')];
    expect(
      splitBySeparator(listed, TAG)
        .get(0)
        ?.map((e) => e.section),
    ).toEqual(['refrelay-fanout-file', 'remote']);
  });
});
