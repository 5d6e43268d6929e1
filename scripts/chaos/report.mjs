// What a chaos run proves, read from the outcomes only: destinations against sources, the
// destinations' own overlap records, the store's folders, and every node's logs.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { destinationRecord, refsOf } from './repos.mjs';

const LOCK_NAME = /^[0-9a-f]{40}$/;
const TASK_FILE = /^[0-9a-f]{40}\.json$/;

/** Programming errors are never an expected race, whatever level they were logged at. */
const PROGRAMMING_ERROR = /TypeError|ReferenceError|RangeError|SyntaxError|is not a function|Cannot read prop|undefined is not|unhandled|Unhandled/;

function list(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * The text of a small regular file, else undefined. The store holds hostile entries too: a FIFO
 * named owner.json would block a plain read forever, a symlink leads out of the store, a sparse
 * file is gigabytes. Opened without following links and without blocking, checked again on the
 * descriptor.
 */
export function readStoreText(path, maxBytes = 1024 * 1024) {
  let fd;
  try {
    const before = lstatSync(path);
    if (!before.isFile() || before.size > maxBytes) return undefined;
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > maxBytes) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readJson(path) {
  const text = readStoreText(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The claims `nodeId` holds in the (local view of the) store right now: lock name, URI and how
 * many tasks sit in its lease folder. Taken just after a node is killed or paused. The owner
 * record is read where either layout keeps it: `<lock>/owner.json` or `<lock>/<leaseId>/owner.json`.
 */
export function claimsOf(storeDir, nodeId) {
  const running = join(storeDir, 'ref-updates', 'running');
  const claims = [];
  for (const lockName of list(running).filter((name) => LOCK_NAME.test(name))) {
    const entries = list(join(running, lockName));
    const owners = [readJson(join(running, lockName, 'owner.json')), ...entries.map((name) => readJson(join(running, lockName, name, 'owner.json')))];
    const owner = owners.find((record) => record !== undefined && typeof record.leaseId === 'string');
    if (owner?.nodeId !== nodeId) continue;
    const tasks = list(join(running, lockName, owner.leaseId)).filter((name) => TASK_FILE.test(name)).length;
    if (tasks > 0) claims.push({ lockName, uri: owner.uri, leaseId: owner.leaseId, tasks });
  }
  return claims;
}

/**
 * Store folders that must be empty once the cluster drained; failed/ is listed per task.
 * `planted`: paths of hostile entries still where they were put, which are nobody's leftovers.
 * `parkedHostileUri`: the uri of planted well-formed tasks, whose place is failed/.
 */
export function storeLeftovers(storeDir, planted = new Set(), parkedHostileUri = undefined) {
  const refUpdates = join(storeDir, 'ref-updates');
  const listOwn = (dir) => list(dir).filter((name) => !planted.has(join(dir, name)));
  const failed = [];
  for (const uriKey of listOwn(join(refUpdates, 'failed'))) {
    for (const name of list(join(refUpdates, 'failed', uriKey)).filter((file) => TASK_FILE.test(file))) {
      const reason = readJson(join(refUpdates, 'failed', uriKey, `${name}.reason.json`));
      const task = readJson(join(refUpdates, 'failed', uriKey, name));
      // A planted task for a URL no remote has: parked unpushed, as the design says (the hostile audit counts it).
      if (parkedHostileUri !== undefined && task?.uri === parkedHostileUri) continue;
      failed.push(`${task?.uri ?? uriKey} ${JSON.stringify(task?.refs ?? [])}: ${reason?.reason ?? 'no reason'}`);
    }
  }
  return {
    waiting: listOwn(join(refUpdates, 'waiting')).filter((name) => !name.startsWith('.nfs')),
    running: listOwn(join(refUpdates, 'running')),
    building: listOwn(join(refUpdates, 'building')),
    corrupt: listOwn(join(refUpdates, 'corrupt')),
    failed,
  };
}

export function storeIsEmpty(storeDir, planted) {
  const left = storeLeftovers(storeDir, planted);
  return left.waiting.length === 0 && left.running.length === 0;
}

/** Refs that differ between a source and a destination (missing, extra or at another value). */
function refDifferences(source, destination, filter) {
  const differences = [];
  const wanted = new Map([...source].filter(([ref]) => filter(ref)));
  for (const [ref, value] of wanted) {
    const got = destination.get(ref);
    if (got !== value) differences.push(`${ref}: source ${value.slice(0, 12)}, destination ${got?.slice(0, 12) ?? 'missing'}`);
  }
  for (const [ref, value] of destination) {
    if (filter(ref) && !wanted.has(ref)) differences.push(`${ref}: deleted at the source, still ${value.slice(0, 12)} at the destination`);
  }
  return { differences, compared: wanted.size };
}

export function compareDestinations({ projects, sourceOf, destinations }) {
  const lost = [];
  let refsCompared = 0;
  let pushes = 0;
  const overlaps = [];
  let staleMarkers = 0;
  for (const project of projects) {
    const source = refsOf(sourceOf(project));
    for (const destination of destinations) {
      const path = destination.pathOf(project);
      const { differences, compared } = refDifferences(source, refsOf(path), destination.filter);
      refsCompared += compared;
      for (const difference of differences) lost.push(`${destination.name} ${project} ${difference}`);
      const record = destinationRecord(path);
      pushes += record.pushes;
      staleMarkers += record.staleMarkers;
      for (const line of record.overlaps) overlaps.push(`${destination.name} ${project}: ${line}`);
    }
  }
  return { lost, refsCompared, pushes, overlaps, staleMarkers };
}

/**
 * From every node's logs: takeovers, and for each claim a dead or paused node held, how long
 * from the fault until a push of that URI succeeded after the claim was recovered.
 */
export function analyseLogs(nodes, faults, expectedError = () => false) {
  const lines = nodes.flatMap((node) => node.logLines().map((line) => ({ ...line, at: Date.parse(line.time) })));
  const problems = [];
  /** Error lines a fault explains (a full store's ENOSPC), counted apart from problems. */
  const expectedErrors = {};
  for (const line of lines) {
    const err = typeof line.err === 'string' ? line.err : JSON.stringify(line.err ?? '');
    if (line.level >= 50 && !PROGRAMMING_ERROR.test(err) && expectedError(line, err)) expectedErrors[line.msg] = (expectedErrors[line.msg] ?? 0) + 1;
    else if (line.level >= 50)
      problems.push(`${line.node} #${line.incarnation} ${line.time} error log: ${line.msg}${line.err ? ` (${err.slice(0, 300)})` : ''}`);
    else if (PROGRAMMING_ERROR.test(err)) problems.push(`${line.node} #${line.incarnation} ${line.time} ${line.msg}: ${err.slice(0, 300)}`);
  }
  for (const node of nodes) {
    for (const { file, text } of node.stderrTexts()) problems.push(`${file}: ${text.slice(0, 1500)}`);
    problems.push(...node.unexpectedExits, ...node.badStops);
  }
  const count = (msg) => lines.filter((line) => line.msg === msg).length;
  const recoveries = lines.filter((line) => ['took over a stale URI lock', 'recovered own earlier claim', 'swept an abandoned tombstone'].includes(line.msg));
  const pushed = lines.filter((line) => line.msg === 'pushed').sort((a, b) => a.at - b.at);

  const claimedBy = new Map(lines.filter((line) => line.msg === 'claimed').map((line) => [line.lease, line]));
  /** The push the holder itself logged for this lease: its next push of the URI (logged only while the lock was still its own). */
  const holderPush = (claim) => {
    const claimed = claimedBy.get(claim.leaseId);
    if (claimed === undefined) return undefined;
    const sameHolder = (line) => line.node === claimed.node && line.incarnation === claimed.incarnation && line.uri === claim.uri && line.at >= claimed.at;
    const push = pushed.find(sameHolder);
    const nextClaim = lines.find((line) => line.msg === 'claimed' && line !== claimed && sameHolder(line));
    return push !== undefined && (nextClaim === undefined || push.at <= nextClaim.at) ? push : undefined;
  };

  const deliveries = [];
  const undelivered = [];
  for (const fault of faults) {
    for (const claim of fault.claims) {
      const own = holderPush(claim);
      if (own !== undefined) {
        deliveries.push({ ms: Math.max(0, own.at - fault.at), fault, claim, by: own.node, recoveredBy: 'the holder itself' });
        continue;
      }
      // The recovery of this very claim: its lock taken from the faulted process, or the sweep of
      // a tombstone named after its lease, moving tasks back to waiting/. Without one, the first
      // push of the URI after the fault counts (also when a breaker died mid-takeover and its own
      // tombstone was swept).
      const recovered = recoveries
        .filter((line) => line.at >= fault.at && line.tasks > 0)
        .filter(
          (line) =>
            (line.lock === claim.lockName && line.formerPid === fault.pid) ||
            (typeof line.tombstone === 'string' && line.tombstone.startsWith(claim.lockName) && line.tombstone.endsWith(claim.leaseId)),
        )
        .sort((a, b) => a.at - b.at)[0];
      const from = Math.max(fault.at, recovered?.at ?? fault.at);
      const delivery = pushed.find((line) => line.uri === claim.uri && line.at >= from);
      if (delivery === undefined)
        undelivered.push(`${fault.kind} of ${fault.node} at ${new Date(fault.at).toISOString()}: claim on ${claim.uri} (${claim.tasks} tasks) never pushed`);
      else deliveries.push({ ms: delivery.at - fault.at, fault, claim, by: delivery.node, recoveredBy: recovered?.msg ?? 'the holder itself' });
    }
  }
  deliveries.sort((a, b) => b.ms - a.ms);
  return {
    problems,
    takeovers: count('took over a stale URI lock'),
    ownRecoveries: count('recovered own earlier claim'),
    tombstoneSweeps: count('swept an abandoned tombstone'),
    lockLosses: count('lost the URI lock while holding it; aborting the push'),
    retries: count('retry scheduled'),
    pushesLogged: pushed.length,
    pushesByNode: Object.fromEntries(nodes.map((node) => [node.id, pushed.filter((line) => line.node === node.id).length])),
    deliveries,
    undelivered,
    expectedErrors,
    spoolForwarded: lines.filter((line) => line.msg === 'forwarded spooled tasks into the store').reduce((sum, line) => sum + (line.tasks ?? 0), 0),
  };
}

/** Prints the report and the `chaos-summary-json:` line; true when every check passed. */
export function summarize(options, outcome) {
  const { nodes, faultCounts, driver, compared, leftovers, logs, drainMs, hostile, storeFull } = outcome;
  const spooled = Object.values(driver.spooled).reduce((sum, n) => sum + n, 0);
  const faultTotal = faultCounts.SIGKILL + faultCounts.SIGSTOP + faultCounts.restart;
  const claimsHit = outcome.faults.reduce((sum, fault) => sum + fault.claims.length, 0);
  const longest = logs.deliveries[0];
  const checks = [
    ['zero lost updates (destinations equal sources)', compared.lost.length === 0, compared.lost],
    ['zero overlapping pushes to one repository', compared.overlaps.length === 0, compared.overlaps],
    [
      'store drained: waiting/, running/ and the local spool empty',
      leftovers.waiting.length === 0 && leftovers.running.length === 0 && leftovers.spool.length === 0,
      [...leftovers.waiting.map((n) => `waiting/${n}`), ...leftovers.running.map((n) => `running/${n}`), ...leftovers.spool.map((n) => `spool/${n}`)],
    ],
    [
      'nothing left in building/ or corrupt/',
      leftovers.building.length === 0 && leftovers.corrupt.length === 0,
      [...leftovers.building.map((n) => `building/${n}`), ...leftovers.corrupt.map((n) => `corrupt/${n}`)],
    ],
    ['nothing unexpected in failed/', leftovers.failed.length === 0, leftovers.failed],
    ['no error, exception or crash in any node', logs.problems.length === 0, logs.problems],
    ['every claim of a killed or paused node delivered', logs.undelivered.length === 0, logs.undelivered],
    [
      'every push into a source queued its update',
      driver.enqueueFailures.length === 0 && driver.pushFailures.length === 0,
      [...driver.enqueueFailures, ...driver.pushFailures],
    ],
    ['faults were injected', faultTotal > 0, []],
    ['hostile entries were planted', hostile.planted > 0, []],
    [
      'every hostile entry moved to corrupt/ with a .reason, left where it was put, removed as store bookkeeping, or (a well-formed task for a URL no remote has) parked in failed/',
      hostile.vanished.length === 0 && hostile.missingReason.length === 0,
      [...hostile.missingReason, ...hostile.vanished],
    ],
    [
      'no .reason and no node log or stderr quotes the secret',
      hostile.reasonProblems.length === 0 && hostile.secretIn.length === 0,
      [...hostile.reasonProblems, ...hostile.secretIn.map((file) => `${file} quotes the secret`)],
    ],
    ['the victim folder outside the store is unchanged', hostile.victimIntact, hostile.victimChanges ?? []],
    ['the store filled up (unless the tmpfs mount was refused)', storeFull.skipped !== undefined || storeFull.episodes > 0, []],
  ];
  const pass = checks.every(([, ok]) => ok);
  const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const out = [];
  out.push('');
  out.push(`refrelay chaos run: ${options.minutes} min of faults, seed ${options.seed}, destination hooks sleep ${options.pushSeconds} s`);
  out.push(`nodes: ${nodes.map((node) => `${node.id} (${node.view}, ${node.incarnation} incarnations)`).join('; ')}`);
  out.push(
    `faults injected: ${faultTotal} (SIGKILL ${faultCounts.SIGKILL}, SIGSTOP past lockStale ${faultCounts.SIGSTOP}, graceful restart ${faultCounts.restart}); ${claimsHit} held claims hit`,
  );
  out.push(
    `pushes into sources: ${driver.pushes} (${Object.entries(driver.byKind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ')}), ${driver.refUpdates} ref updates`,
  );
  out.push(
    `pushes received by destinations: ${compared.pushes}; logged by nodes: ${logs.pushesLogged} (${Object.entries(logs.pushesByNode)
      .map(([id, n]) => `${id} ${n}`)
      .join(', ')}); retries ${logs.retries}`,
  );
  out.push(
    `takeovers: ${logs.takeovers} stale URI locks taken over, ${logs.ownRecoveries} own claims recovered at restart, ${logs.tombstoneSweeps} tombstones swept, ${logs.lockLosses} pushes aborted after losing the lock`,
  );
  out.push(
    longest === undefined
      ? 'longest death-to-delivery: n/a (no killed or paused node held a claim)'
      : `longest death-to-delivery: ${s(longest.ms)} (${longest.fault.kind} of ${longest.fault.node}, ${longest.claim.uri}, recovered by ${longest.recoveredBy}, pushed by ${longest.by}); median ${s(logs.deliveries[Math.floor(logs.deliveries.length / 2)].ms)} over ${logs.deliveries.length} claims; design bound lockStale + distributionInterval + randomDelay = ${s(options.lockStaleMs + 800)} plus restart delay and the cached mount's lag`,
  );
  out.push(`overlapping pushes: ${compared.overlaps.length} (stale markers of killed pushes: ${compared.staleMarkers})`);
  out.push(`lost refs: ${compared.lost.length} of ${compared.refsCompared} refs compared`);
  out.push(
    `hostile entries: ${hostile.planted} planted (${Object.entries(hostile.byKind)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(
        ', ',
      )}; ${hostile.skipped} attempts planted nothing), ${hostile.quarantined} quarantined, ${hostile.parked} well-formed tasks for a URL no remote has parked in failed/, ${hostile.ignored} left in place, ${hostile.removedAsOwn.length} removed as store bookkeeping (owner.json or *.tmp files in a lock folder, directories there or named like a lock, waiting folders emptied of their bad task), ${hostile.vanished.length} vanished; victim ${hostile.victimIntact ? 'intact' : 'CHANGED'}`,
  );
  out.push(
    storeFull.skipped !== undefined
      ? `store full: skipped (${storeFull.skipped})`
      : `store full: ${storeFull.episodes} episodes, ${storeFull.seconds.toFixed(1)} s in all; hooks spooled ${spooled} updates (${JSON.stringify(driver.spooled)}), nodes forwarded ${logs.spoolForwarded} tasks`,
  );
  out.push(`error lines a full store or a planted task explains: ${JSON.stringify(logs.expectedErrors)}`);
  out.push(
    `store after drain (${s(drainMs)}), hostile entries left in place not counted: waiting ${leftovers.waiting.length}, running ${leftovers.running.length}, building ${leftovers.building.length} (and ${leftovers.killDebris?.length ?? 0} temps of writers SIGKILLed mid-write, swept after 1 h), corrupt (not hostile) ${leftovers.corrupt.length}, failed ${leftovers.failed.length}, spool ${leftovers.spool.length}`,
  );
  out.push('checks:');
  for (const [name, ok, details] of checks) {
    out.push(`  ${ok ? 'ok  ' : 'FAIL'} ${name}`);
    if (!ok) for (const line of details.slice(0, 15)) out.push(`         ${line}`);
    if (!ok && details.length > 15) out.push(`         … ${details.length - 15} more`);
  }
  out.push(`RESULT: ${pass ? 'PASS' : 'FAIL'}`);
  console.log(out.join('\n'));
  const json = {
    pass,
    minutes: options.minutes,
    seed: options.seed,
    faults: { total: faultTotal, ...faultCounts },
    claimsHit,
    sourcePushes: driver.pushes,
    destinationPushes: compared.pushes,
    takeovers: logs.takeovers,
    ownRecoveries: logs.ownRecoveries,
    longestDeathToDeliveryMs: longest?.ms ?? null,
    overlaps: compared.overlaps.length,
    lostRefs: compared.lost.length,
    refsCompared: compared.refsCompared,
    leftovers: {
      waiting: leftovers.waiting.length,
      running: leftovers.running.length,
      building: leftovers.building.length,
      killDebris: leftovers.killDebris?.length ?? 0,
      corrupt: leftovers.corrupt.length,
      failed: leftovers.failed.length,
      spool: leftovers.spool.length,
    },
    problems: logs.problems.length,
    undelivered: logs.undelivered.length,
    enqueueFailures: driver.enqueueFailures.length + driver.pushFailures.length,
    hostile: {
      planted: hostile.planted,
      quarantined: hostile.quarantined,
      parked: hostile.parked,
      ignored: hostile.ignored,
      removedAsBookkeeping: hostile.removedAsOwn.length,
      vanished: hostile.vanished.length,
      missingReason: hostile.missingReason.length,
      byKind: hostile.byKind,
      victimIntact: hostile.victimIntact,
      secretEchoed: hostile.reasonProblems.length + hostile.secretIn.length,
    },
    storeFull: {
      skipped: storeFull.skipped ?? null,
      episodes: storeFull.episodes,
      seconds: Number(storeFull.seconds.toFixed(1)),
      spooled,
      forwarded: logs.spoolForwarded,
      expectedErrorLines: Object.values(logs.expectedErrors).reduce((sum, n) => sum + n, 0),
    },
  };
  console.log(`chaos-summary-json: ${JSON.stringify(json)}`);
  return pass;
}
