import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { appSource } from '../../support/git.js';
import { gerritEventsDir, writeGerritTask } from '../../support/gerrit-queue.js';
import { initStoreSync, RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

interface Site {
  root: string;
  config: string;
  events: string;
  gerrit: ReturnType<typeof gerritEventsDir>;
  dest: string;
  spool: string;
}

/**
 * The plugin's own replication.config, loaded as is: its `eventsDirectory` (refrelay's alias of
 * storePath) is the plugin's events directory, with the plugin's folders in it.
 */
function site(): Site {
  const root = tempDir('refrelay-gerrit-events');
  const { base } = appSource(root);
  const events = join(root, 'gerrit', 'data', 'replication');
  const dest = join(root, 'dest');
  const spool = join(root, 'spool');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  eventsDirectory = ${events}`,
    `  basePath = ${base}`,
    `  spoolPath = ${spool}`,
    '  distributionInterval = 200ms',
    '[remote "mirror"]',
    `  url = ${dest}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  return { root, config, events, gerrit: gerritEventsDir(events), dest, spool };
}

/** 20 tasks waiting and 1 the plugin was pushing when it stopped: the 21 files of its queue. */
function queueOf21(s: Site): string[] {
  const written: string[] = [];
  for (let n = 1; n <= 20; n++)
    written.push(writeGerritTask(s.gerrit.waiting, { project: 'app', refs: [`refs/heads/b${n}`], uri: `${s.dest}/app.git`, remote: 'mirror' }));
  written.push(writeGerritTask(s.gerrit.running, { project: 'app', refs: ['refs/heads/main'], uri: `${s.dest}/app.git`, remote: 'mirror' }));
  return written;
}

const refusal = (s: Site, evidence: string): string =>
  `${s.events} is the events directory of Gerrit's replication plugin, not a refrelay store: ${evidence}. ` +
  "refrelay never pushes the plugin's task files and the plugin moves files there, so they cannot share it. " +
  `Point replication.storePath at a folder of refrelay's own (refrelay init makes it), then take the plugin's tasks over with: refrelay import-gerrit-queue ${s.events}`;

const FILES_21 = 'its ref-updates/ holds 21 task files of the plugin (20 in waiting/, 1 in running/)';

async function daemonRun(s: Site): Promise<{ code: number | null; stderr: string; logs: number }> {
  const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
  const { code } = await node.exited;
  return { code, stderr: node.stderr, logs: node.logs().length };
}

describe("storePath at the events directory of Gerrit's replication plugin", () => {
  it('with a marker, config check and the daemon warn but never refuse: a file anyone can drop must not stop a cluster', async () => {
    const s = site();
    initStoreSync(s.events); // `refrelay init` run there, as the migration steps used to say
    const gerritFiles = queueOf21(s);

    const check = runCli(['config', 'check', '--config', s.config]);
    expect(check.stderr).toBe(`warning: ${s.config}: replication.storePath: ${refusal(s, FILES_21)}\n`);
    expect(check.status).toBe(0);

    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    const { code } = await node.exited;
    expect(code).toBe(0);
    expect(node.logs().filter((line) => line.level === 40 && line.msg === `${s.config}: replication.storePath: ${refusal(s, FILES_21)}`)).toHaveLength(1);

    expect(runCli(['init', '--config', s.config]).status).toBe(0);
    for (const path of gerritFiles) expect(existsSync(path)).toBe(true);
    expect(existsSync(s.dest)).toBe(false);
  });

  it('without a marker: init, status and enqueue refuse it too (exit 1), nothing is written or spooled, and no daemon adopts it', async () => {
    const s = site();
    queueOf21(s);
    const before = namesIn(s.events);

    for (const args of [['init'], ['status'], ['enqueue', '--project', 'app', '--ref', 'refs/heads/main']]) {
      const result = runCli([...args, '--config', s.config]);
      expect(result.stderr).toBe(`refrelay: ${refusal(s, FILES_21)}\n`);
      expect(result.status).toBe(1);
    }
    const daemon = await daemonRun(s);
    expect(daemon.stderr).toBe(`${s.config}: replication.storePath: ${refusal(s, FILES_21)}\n`);
    expect(daemon.code).toBe(3);

    expect(namesIn(s.events)).toEqual(before);
    expect(namesIn(s.gerrit.refUpdates)).toEqual(['building', 'running', 'waiting']);
    expect(existsSync(s.spool) ? readdirSync(s.spool) : []).toEqual([]);
  });

  it("is refused before the plugin queued anything: its bare folders are not an earlier refrelay's store to adopt", async () => {
    const s = site();
    const bare = "its ref-updates/ holds the plugin's building/, running/ and waiting/ and nothing of refrelay's";
    const daemon = await daemonRun(s);
    expect(daemon.stderr).toBe(`${s.config}: replication.storePath: ${refusal(s, bare)}\n`);
    expect(daemon.code).toBe(3);
    expect(runCli(['init', '--config', s.config]).stderr).toBe(`refrelay: ${refusal(s, bare)}\n`);
    expect(namesIn(s.events)).toEqual(['ref-updates']);
  });

  it('with storePath pointed elsewhere, the advised import takes the whole queue over and config check passes', () => {
    const s = site();
    queueOf21(s);
    const store = join(s.root, 'refrelay-store');
    mkdirSync(store);
    const config = writeConfig(join(s.root, 'moved.config'), [
      '[replication]',
      `  storePath = ${store}`,
      `  eventsDirectory = ${s.events}`,
      '[remote "mirror"]',
      `  url = ${s.dest}/\${name}.git`,
    ]);
    const imported = runCli(['import-gerrit-queue', s.events, '--config', config, '--include-running', '--remove']);
    expect(imported.stderr).toBe('');
    expect(imported.stdout).toBe('imported 21 tasks (0 already queued, 1 from running/), skipped 0, removed 21 Gerrit files\n');
    expect(waitingTaskNames(store)).toHaveLength(21);
    // Its live-lane folder in waiting/ is named `<uriKey>`, like a task file of the plugin: not one.
    const check = runCli(['config', 'check', '--config', config]);
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
