// Chaos run: three `refrelay daemon`s on one store — one on the local directory, one through an
// sshfs mount that caches attributes and directories (as NFS does), one through a coherent
// sshfs mount — while a driver makes real `git push`es into source repositories whose hooks run
// `refrelay enqueue`, and a chaos loop SIGKILLs nodes, SIGSTOPs them past lockStale, or restarts
// them. Meanwhile hostile entries (random bytes, JSON, sparse files, FIFOs, symlinks out of the
// store, directories) appear in store folders, and the store — a small tmpfs of its own — fills
// up for a few seconds now and then, so hooks spool. Then the cluster drains and the run checks
// that nothing was lost, no destination saw two pushes at once, the store is clean (but for the
// hostile entries refrelay leaves alone), hostile entries went to corrupt/ without their secret
// being echoed, the folder their symlinks point at is untouched, and no node logged an error.
//
//   node scripts/chaos.mjs [--minutes N] [--seed S] [--keep] [--push-seconds S]
//   node scripts/chaos.mjs --check    # can this machine run it? (mounts a probe, exit 0 or 2)
//
// Exit 0: every check passed. 1: a check failed. 2: bad usage, or this machine cannot run it
// (needs root, /dev/fuse, sshfs, openssh-server). The last line is `chaos-summary-json: {…}`.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Processes, missingPrerequisites, mountSshfs, sleep, startGitDaemon, startSshd } from './chaos/infra.mjs';
import { ChaosNode } from './chaos/nodes.mjs';
import { analyseLogs, claimsOf, compareDestinations, storeIsEmpty, storeLeftovers, summarize } from './chaos/report.mjs';
import { Driver, gitEnv, makeRecordingDestination, makeSource } from './chaos/repos.mjs';
import { HostilePlanter, SECRET, hostileTaskUri } from './chaos/hostile.mjs';
import { StoreFiller, mountStoreTmpfs } from './chaos/store-full.mjs';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const LOCK_STALE_MS = 8_000;
/** sshfs caches of the "NFS-like" mount; lockStale must exceed twice this plus a heartbeat. */
const CACHE_TIMEOUT_S = 3;
const PROJECT_COUNT = 8;
const SHUTDOWN_GRACE_MS = 10_000;
const DRAIN_TIMEOUT_MS = 180_000;

/**
 * The run uses a copy of the build made at its start: a rebuild in the working tree meanwhile
 * (a test run's global setup) must not give restarted nodes other code than their peers.
 */
function snapshotBuild(root) {
  const app = join(root, 'app');
  mkdirSync(app);
  for (const entry of ['bin', 'dist', 'package.json']) cpSync(join(repoRoot, entry), join(app, entry), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(app, 'node_modules'));
  return join(app, 'bin', 'refrelay.js');
}

function parseArgs(argv) {
  // pushSeconds: how long each destination's pre-receive sleeps, i.e. how long a push holds its URI.
  const options = { minutes: 3, seed: Date.now() % 1_000_000, keep: false, check: false, pushSeconds: 0.2 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i];
    if (flag === '--minutes') options.minutes = Number(value());
    else if (flag === '--seed') options.seed = Number(value());
    else if (flag === '--keep') options.keep = true;
    else if (flag === '--check') options.check = true;
    else if (flag === '--push-seconds') options.pushSeconds = Number(value());
    else if (flag === '--help' || flag === '-h') {
      console.log('usage: node scripts/chaos.mjs [--minutes N (default 3)] [--seed S] [--keep] [--push-seconds S (default 0.2)] | --check');
      process.exit(0);
    } else usage(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (!(options.minutes > 0)) usage('--minutes needs a positive number');
  if (!Number.isInteger(options.seed)) usage('--seed needs an integer');
  if (!(options.pushSeconds >= 0)) usage('--push-seconds needs a number ≥ 0');
  return options;
}

function usage(message) {
  console.error(`chaos: ${message}\nusage: node scripts/chaos.mjs [--minutes N] [--seed S] [--keep] [--push-seconds S] | --check`);
  process.exit(2);
}

/** mulberry32: the driver's and the chaos loop's choices repeat for a seed (timing does not). */
function seededRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (low, high) => low + next() * (high - low),
    pick: (items) => items[Math.floor(next() * items.length)],
    shuffle: (items) => {
      const copy = [...items];
      for (let i = copy.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [copy[i], copy[j]] = [copy[j], copy[i]];
      }
      return copy;
    },
  };
}

function nodeConfig({ storePath, basePath, nodeId, destFile, gitDaemon, spoolPath }) {
  return [
    '[replication]',
    `  storePath = ${storePath}`,
    // One spool root for hooks and nodes: the hooks' updates land in the folder of the local
    // store path, which n-local (same storePath, same "machine") forwards.
    `  spoolPath = ${spoolPath}`,
    `  basePath = ${basePath}`,
    `  nodeId = ${nodeId}`,
    '  distributionInterval = 500ms',
    '  randomDelay = 300ms',
    `  lockStale = ${LOCK_STALE_MS / 1000}s`,
    `  shutdownGrace = ${SHUTDOWN_GRACE_MS / 1000}s`,
    '  httpListen = off',
    '[remote "dr"]',
    `  url = file://${destFile}/\${name}.git`,
    '  push = +refs/*:refs/*',
    '  mirror = true',
    '  replicationDelay = 500ms',
    '  replicationRetry = 2s',
    '  threads = 2',
    '  timeout = 60s',
    '[remote "pub"]',
    `  url = ${gitDaemon.url('${name}.git')}`,
    '  push = +refs/heads/*:refs/heads/*',
    '  push = +refs/tags/*:refs/tags/*',
    '  replicationDelay = 500ms',
    '  replicationRetry = 2s',
    '  threads = 2',
    '  timeout = 60s',
    '',
  ].join('\n');
}

const FAULT_KINDS = [
  { kind: 'SIGKILL', weight: 0.4 },
  { kind: 'SIGSTOP', weight: 0.3 },
  { kind: 'restart', weight: 0.3 },
];

async function run(options, root, processes, interrupted) {
  const random = seededRandom(options.seed);
  if (!existsSync(join(repoRoot, 'dist', 'bundle', 'main.js'))) throw new Error('no build: run `npm run build` first');
  const cli = snapshotBuild(root);
  const store = join(root, 'store');
  const base = join(root, 'base');
  const destFile = join(root, 'dest-file');
  const destDaemon = join(root, 'dest-daemon');
  const logDir = join(root, 'logs');
  const spoolPath = join(root, 'spool');
  for (const dir of [store, base, destFile, destDaemon, logDir]) mkdirSync(dir, { recursive: true });
  const tmpfs = mountStoreTmpfs(processes, store);
  const filler = tmpfs.refused === undefined ? new StoreFiller(store) : undefined;
  if (filler === undefined) console.log(`chaos: store-full faults skipped: ${tmpfs.refused}`);
  const victim = join(root, 'victim');
  const victimBefore = HostilePlanter.makeVictim(victim);
  const hostile = new HostilePlanter({ store, victim, random: seededRandom(options.seed ^ 0x5bd1e995) });

  const sshd = await startSshd(processes, join(root, 'sshd'));
  const cachedMount = join(root, 'm-cached');
  const coherentMount = join(root, 'm-coherent');
  await mountSshfs(processes, sshd, store, cachedMount, `dcache_timeout=${CACHE_TIMEOUT_S},attr_timeout=${CACHE_TIMEOUT_S},entry_timeout=${CACHE_TIMEOUT_S}`);
  await mountSshfs(processes, sshd, store, coherentMount, 'dir_cache=no,attr_timeout=0,entry_timeout=0');
  const gitDaemon = await startGitDaemon(processes, destDaemon, gitEnv);

  const projects = Array.from({ length: PROJECT_COUNT }, (_, i) => `team/p${i}`);
  const sourceOf = (project) => join(base, `${project}.git`);
  const hookConfig = join(root, 'hook.config');
  writeFileSync(hookConfig, nodeConfig({ storePath: store, basePath: base, nodeId: 'hook', destFile, gitDaemon, spoolPath }));
  const checked = spawnSync(process.execPath, [cli, 'config', 'check', '--config', hookConfig], { encoding: 'utf8' });
  if (checked.status !== 0) throw new Error(`the generated config is invalid:\n${checked.stdout}${checked.stderr}`);
  const init = spawnSync(process.execPath, [cli, 'init', '--config', hookConfig], { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`refrelay init failed:\n${init.stdout}${init.stderr}`);
  for (const project of projects) {
    makeSource(sourceOf(project), cli, hookConfig);
    makeRecordingDestination(join(destFile, `${project}.git`), options.pushSeconds);
    makeRecordingDestination(join(destDaemon, `${project}.git`), options.pushSeconds);
  }
  const views = [
    { id: 'n-local', view: 'local directory', storePath: store },
    { id: 'n-cached', view: `sshfs, caching (dcache/attr/entry ${CACHE_TIMEOUT_S} s)`, storePath: cachedMount },
    { id: 'n-coherent', view: 'sshfs, coherent (dir_cache=no, timeouts 0)', storePath: coherentMount },
  ];
  const nodes = views.map(({ id, view, storePath }) => {
    const config = join(root, `${id}.config`);
    writeFileSync(config, nodeConfig({ storePath, basePath: base, nodeId: id, destFile, gitDaemon, spoolPath }));
    return new ChaosNode({ processes, cli, id, view, config, logDir });
  });

  console.log(
    `chaos: workspace ${root}, seed ${options.seed}, ${options.minutes} min of faults, lockStale ${LOCK_STALE_MS / 1000} s, pushes hold a destination ${options.pushSeconds} s`,
  );
  const driver = new Driver({ root, projects, sourceOf, random });
  await driver.seed();
  for (const node of nodes) node.start();

  const faults = [];
  const faultCounts = { SIGKILL: 0, SIGSTOP: 0, restart: 0 };
  const events = join(logDir, 'chaos-events.log');
  const event = (text) => appendFileSync(events, `${new Date().toISOString()} ${text}\n`);
  const inject = async (node, kind) => {
    // Half the kills and pauses strike while the node holds a claim (mid-push), not at random.
    if (kind !== 'restart' && random.next() < 0.5) {
      const until = Date.now() + 2000;
      while (Date.now() < until && node.state === 'up' && claimsOf(store, node.id).length === 0) await sleep(20);
    }
    faultCounts[kind]++;
    const at = Date.now();
    const pid = node.pid;
    event(`${kind} ${node.id} pid ${node.pid}`);
    if (kind === 'SIGKILL') {
      await node.kill();
      const claims = claimsOf(store, node.id);
      faults.push({ kind, node: node.id, pid, at, claims });
      event(`  ${node.id} held ${JSON.stringify(claims)}`);
      // Mostly back at once (it recovers its own claims); sometimes only after lockStale, so a
      // peer must take the dead node's locks over.
      await sleep(random.next() < 0.7 ? random.between(300, 2500) : random.between(LOCK_STALE_MS + 1000, LOCK_STALE_MS + 4000));
      node.start();
      event(`  ${node.id} restarted as pid ${node.pid}`);
    } else if (kind === 'SIGSTOP') {
      node.signal('SIGSTOP');
      await sleep(150);
      const claims = claimsOf(store, node.id);
      faults.push({ kind, node: node.id, pid, at, claims });
      event(`  ${node.id} held ${JSON.stringify(claims)}`);
      await sleep(LOCK_STALE_MS + 2000 - 150);
      node.signal('SIGCONT');
      event(`  ${node.id} SIGCONT`);
    } else {
      await node.stop(SHUTDOWN_GRACE_MS + 10_000);
      node.start();
      event(`  ${node.id} restarted as pid ${node.pid}`);
    }
  };

  const deadline = Date.now() + options.minutes * 60_000;
  const driving = driver.run(() => random.between(100, 400));
  const storeFaults = storeFaultLoops({
    hostile,
    filler,
    random: seededRandom(options.seed ^ 0x27d4eb2f),
    until: () => Date.now() >= deadline || interrupted(),
    event,
  });
  const pending = new Set();
  while (Date.now() < deadline && !interrupted()) {
    await sleep(random.between(2500, 5000));
    // One node always stays out of the chaos's hands, so someone can watch a lock go stale.
    if (pending.size >= nodes.length - 1) continue;
    const candidates = nodes.filter((node) => !node.busy && node.state === 'up' && Date.now() - node.startedAt > 2000);
    if (candidates.length === 0) continue;
    const node = random.pick(candidates);
    let roll = random.next();
    const { kind } = FAULT_KINDS.find((entry) => (roll -= entry.weight) < 0) ?? FAULT_KINDS[0];
    node.busy = true;
    const fault = inject(node, kind).finally(() => {
      node.busy = false;
      pending.delete(fault);
    });
    pending.add(fault);
  }
  driver.stop();
  await driving;
  await Promise.all(pending);
  await storeFaults;
  if (interrupted()) throw new Error('interrupted');

  // Drain: every node up, until the store holds no waiting or running task.
  event('driver and faults stopped: draining');
  for (const node of nodes) if (!node.alive) node.start();
  const drainStarted = Date.now();
  let emptyChecks = 0;
  const spoolDir = join(spoolPath, createHash('sha1').update(resolve(store)).digest('hex'));
  // Spool files where enqueue put them, and claims a forwarder has not finished (forwarding/).
  const spooledFiles = () =>
    ['', 'forwarding'].flatMap((folder) => {
      const dir = join(spoolDir, folder);
      return existsSync(dir)
        ? readdirSync(dir)
            .filter((name) => /^[0-9a-f]{40}\.json/.test(name))
            .map((name) => join(folder, name))
        : [];
    });
  const spoolHolds = () => spooledFiles().length > 0;
  while (emptyChecks < 3) {
    if (Date.now() - drainStarted > DRAIN_TIMEOUT_MS) break;
    if (interrupted()) throw new Error('interrupted');
    emptyChecks = storeIsEmpty(store, hostile.stillInPlace()) && !spoolHolds() ? emptyChecks + 1 : 0;
    await sleep(500);
  }
  const drainMs = Date.now() - drainStarted;
  event(`drain ended after ${drainMs} ms`);
  await Promise.all(nodes.map((node) => node.stop(SHUTDOWN_GRACE_MS + 10_000)));

  const destinations = [
    { name: 'file://', pathOf: (project) => join(destFile, `${project}.git`), filter: () => true },
    { name: 'git://', pathOf: (project) => join(destDaemon, `${project}.git`), filter: (ref) => ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/') },
  ];
  const compared = compareDestinations({ projects, sourceOf, destinations });
  const leftovers = storeLeftovers(store, hostile.stillInPlace(), hostileTaskUri(victim));
  const audit = hostile.audit({ viewRoots: views.map((view) => view.storePath), victimBefore });
  // corrupt/ holds the hostile entries refrelay moved there; anything else in it was its own file.
  // Named with its quarantine reason (type, size or what failed to parse: never content), to find why.
  leftovers.corrupt = audit.ownFilesQuarantined.map((name) => `${name} (${corruptReason(join(store, 'ref-updates', 'corrupt'), name)})`);
  // A temp of a writer SIGKILLed mid-write is crash debris the building/ sweep removes after 1 h;
  // any other temp left behind is a leak. Named `<stem>.<nodeTag>.<token>.tmp`, written just before the kill.
  const killedMidWrite = (name) => {
    const nodeTag = name.split('.').at(-3);
    const written = lstatSync(join(store, 'ref-updates', 'building', name), { throwIfNoEntry: false })?.mtimeMs;
    return (
      written !== undefined &&
      faults.some((fault) => fault.kind === 'SIGKILL' && fault.node === nodeTag && fault.at >= written - 1000 && fault.at - written < 10_000)
    );
  };
  leftovers.killDebris = leftovers.building.filter(killedMidWrite);
  leftovers.building = leftovers.building.filter((name) => !killedMidWrite(name));
  leftovers.spool = spooledFiles();
  const secretIn = readdirSync(logDir)
    .filter((name) => nodes.some((node) => name.startsWith(`${node.id}.`)))
    .filter((name) => readFileSync(join(logDir, name), 'utf8').includes(SECRET));
  // A full store fails passes, heartbeats and pushes with ENOSPC (through sshfs as an I/O or
  // permission failure); those error lines, during an episode or soon after, are the fault's.
  const fullStoreError = (line, err) =>
    filler !== undefined &&
    filler.during(line.at, 15_000) &&
    /ENOSPC|No space left|EIO|EPERM|Operation not permitted|Input\/output error/.test(`${line.code ?? ''} ${err}`);
  const plantedTaskParked = (line) => line.msg === 'task refused: parked in failed/ without pushing' && line.uri === hostileTaskUri(victim);
  const expectedError = (line, err) => fullStoreError(line, err) || plantedTaskParked(line);
  const logs = analyseLogs(nodes, faults, expectedError);
  const storeFull = { skipped: tmpfs.refused, episodes: filler?.episodes.length ?? 0, seconds: filler?.seconds ?? 0 };
  return { nodes, faultCounts, faults, driver: driver.stats, compared, leftovers, logs, drainMs, hostile: { ...audit, secretIn }, storeFull };
}

/**
 * Faults of the store itself, until `until()`: a hostile entry every 1–4 s, and (with a tmpfs
 * store) every 15–30 s a filler that takes the last free page for 2–5 s.
 */
async function storeFaultLoops({ hostile, filler, random, until, event }) {
  const planting = (async () => {
    while (!until()) {
      await sleep(random.between(1000, 4000));
      const entry = hostile.plantOne();
      if (entry !== undefined) event(`hostile ${entry.kind} ${entry.folder}/${entry.name}`);
    }
  })();
  const filling = (async () => {
    if (filler === undefined) return;
    while (!until()) {
      await sleep(random.between(15_000, 30_000));
      if (until()) break;
      filler.fill();
      const ms = random.between(2000, 5000);
      event(`store full for ${(ms / 1000).toFixed(1)} s`);
      await sleep(ms);
      filler.empty();
      event('store has room again');
    }
  })();
  await Promise.all([planting, filling]);
}

/** Static checks pass but the kernel may still refuse a FUSE mount (a container without CAP_SYS_ADMIN). */
async function probeMount(root, processes) {
  try {
    const sshd = await startSshd(processes, join(root, 'sshd'));
    mkdirSync(join(root, 'probe'));
    await mountSshfs(processes, sshd, join(root, 'probe'), join(root, 'mnt'), 'dir_cache=no,attr_timeout=0,entry_timeout=0');
    return undefined;
  } catch (error) {
    return `a probe sshfs mount failed: ${error.message}`;
  } finally {
    await processes.cleanup();
  }
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const missing = missingPrerequisites();
  if (missing !== undefined) {
    console.error(`chaos: cannot run here: ${missing}`);
    return 2;
  }
  const root = mkdtempSync(join(tmpdir(), 'refrelay-chaos-'));
  const processes = new Processes(root);
  if (options.check) {
    const refused = await probeMount(root, processes);
    rmSync(root, { recursive: true, force: true });
    console.log(refused === undefined ? 'chaos: this machine can run the chaos test' : `chaos: cannot run here: ${refused}`);
    return refused === undefined ? 0 : 2;
  }
  let stopRequested = false;
  let cleaning;
  const cleanup = () =>
    (cleaning ??= processes.cleanup().then(() => {
      if (options.keep) console.log(`chaos: workspace kept in ${root}`);
      else rmSync(root, { recursive: true, force: true });
    }));
  const onSignal = (signal) => {
    if (stopRequested) return;
    stopRequested = true;
    console.error(`chaos: ${signal}: stopping everything`);
    cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const outcome = await run(options, root, processes, () => stopRequested);
    return summarize({ ...options, lockStaleMs: LOCK_STALE_MS }, outcome) ? 0 : 1;
  } catch (error) {
    console.error(`chaos: run failed: ${error.stack ?? error}`);
    return 1;
  } finally {
    await cleanup();
  }
}

process.exitCode = await main();

/** The reason refrelay recorded for a quarantined entry, or why there is none. */
function corruptReason(dir, name) {
  try {
    return String(JSON.parse(readFileSync(join(dir, `${name}.reason`), 'utf8')).reason);
  } catch {
    return 'no readable .reason';
  }
}
