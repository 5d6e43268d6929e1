// Hostile entries: things refrelay never wrote, dropped into store folders at random moments
// (DESIGN.md invariant 8). Each one carries a secret string, and symlinks point at a victim
// folder outside the store, so the end of the run can prove that nothing was followed, changed
// or echoed: every entry is either still where it was put (a name refrelay does not read) or
// moved to ref-updates/corrupt/ with a reason that does not quote it (or, a regular file named
// like refrelay's own bookkeeping in a lock folder, removed with that folder; or, a well-formed
// task for a URL no remote has, parked in failed/ unpushed).
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readStoreText } from './report.mjs';

export const SECRET = 'chaos-secret-never-echoed-5e1d9c';

const LOCK_NAME = /^[0-9a-f]{40}$/;
/** `running/LOCK` stands for a lock folder that exists when the entry is planted. */
const FOLDERS = [
  'ref-updates/waiting',
  'ref-updates/running',
  'ref-updates/running/LOCK',
  'ref-updates/failed',
  'ref-updates/done',
  'ref-updates/building',
  'ref-updates/corrupt',
  'uri-state',
  'nodes',
  'history',
  'verify',
];
const KINDS = ['bytes', 'json', 'sparse', 'fifo', 'symlink-file', 'symlink-dir', 'dir'];

function hex40(random) {
  let out = '';
  for (let i = 0; i < 40; i++) out += '0123456789abcdef'[Math.floor(random.next() * 16)];
  return out;
}

function entryName(random) {
  const roll = random.next();
  if (roll < 0.35) return `${hex40(random)}.json`;
  if (roll < 0.55) return hex40(random);
  if (roll < 0.7) return 'owner.json';
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-';
  let name = '';
  const length = 1 + Math.floor(random.next() * 20);
  for (let i = 0; i < length; i++) name += alphabet[Math.floor(random.next() * alphabet.length)];
  return name === '.' || name === '..' ? `x${name}` : name;
}

/** Random bytes with the secret somewhere inside. */
function randomBytes(random) {
  const bytes = Buffer.alloc(Math.floor(random.next() * 4096));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random.next() * 256);
  const at = Math.floor(random.next() * (bytes.length + 1));
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(SECRET), bytes.subarray(at)]);
}

/**
 * The uri of a well-formed task a hostile hand plants: a real project and remote, pushing into the
 * victim folder. No remote has that URL, so the task is parked in failed/ unpushed (DESIGN.md
 * "Task lifecycle verbs"), with a reason that quotes the uri; the secret rides in a field no reader uses.
 */
export function hostileTaskUri(victim) {
  return `file://${victim}/dir`;
}

/** JSON that is sometimes shaped like a task, owner or state record, always carrying the secret. */
function randomJson(random, victim, made) {
  const shapes = [
    () => {
      made.taskShaped = true;
      return { uri: hostileTaskUri(victim), project: 'team/p0', refs: ['refs/heads/main'], remote: 'dr', note: SECRET };
    },
    () => ({ leaseId: SECRET, nodeId: SECRET, uri: SECRET, pid: 1, counter: -1 }),
    () => ({ failures: 1e308, nextAttemptAt: SECRET, note: SECRET }),
    () => [SECRET, random.next(), null, { [SECRET]: true }],
    () => SECRET,
    () => ({ deep: { deeper: { deepest: [SECRET, random.next() < 0.5] } } }),
  ];
  const value = random.pick(shapes)();
  // Sometimes cut short: not JSON at all, but still the secret inside.
  const text = JSON.stringify(value);
  if (random.next() >= 0.2) return text;
  made.taskShaped = false;
  return text.slice(0, Math.max(SECRET.length + 12, Math.floor(text.length / 2)));
}

export class HostilePlanter {
  constructor({ store, victim, random }) {
    Object.assign(this, { store, victim, random });
    this.planted = [];
    this.counts = Object.fromEntries(KINDS.map((kind) => [kind, 0]));
    this.skipped = 0;
  }

  /** The victim folder outside the store: a file and a folder holding the secret. */
  static makeVictim(dir) {
    mkdirSync(join(dir, 'dir'), { recursive: true });
    writeFileSync(join(dir, 'secret.txt'), SECRET);
    writeFileSync(join(dir, 'dir', `${'e'.repeat(40)}.json`), JSON.stringify({ uri: SECRET }));
    return snapshot(dir);
  }

  /** Plants one entry; a taken name, a vanished folder or a full store plants nothing. */
  plantOne() {
    let folder = this.random.pick(FOLDERS);
    if (folder.endsWith('/LOCK')) {
      const running = join(this.store, 'ref-updates', 'running');
      // Real lock folders only: an earlier round may have planted a symlink with a lock's name,
      // and planting "into" it would write into the victim folder it points to.
      const locks = list(running).filter((name) => LOCK_NAME.test(name) && isRealDir(join(running, name)));
      if (locks.length === 0) folder = 'ref-updates/running';
      else folder = `ref-updates/running/${this.random.pick(locks)}`;
    }
    const name = entryName(this.random);
    const kind = this.random.pick(KINDS);
    const path = join(this.store, folder, name);
    if (!isRealDir(join(this.store, folder))) {
      this.skipped++;
      return undefined;
    }
    const made = { created: false };
    try {
      plant(path, kind, this.random, this.victim, made);
    } catch {
      // A full store can fail the write after the name was taken: what this call made goes
      // again, so no half-planted entry is left that nobody counted. An existing entry stays.
      if (made.created) rmSync(path, { recursive: true, force: true });
      this.skipped++;
      return undefined;
    }
    const entry = { folder, name, kind, path, type: typeOf(path), at: Date.now(), inner: made.inner, taskShaped: made.taskShaped === true };
    this.planted.push(entry);
    this.counts[kind]++;
    return entry;
  }

  /** Paths of planted entries still in place: not leftovers of refrelay's own work. */
  stillInPlace() {
    return new Set(this.planted.filter((entry) => typeOf(entry.path) === entry.type).map((entry) => entry.path));
  }

  /**
   * Where each planted entry ended: in place, or in corrupt/ (matched by the reason record's
   * original path, seen through any node's view of the store). Also which corrupt/ entries are
   * not hostile ones (refrelay quarantined its own files), reasons missing or quoting the
   * secret, and whether the victim is unchanged.
   */
  audit({ viewRoots, victimBefore }) {
    const corruptDir = join(this.store, 'ref-updates', 'corrupt');
    // A lock folder's entries are quarantined from its tombstone (`<lock>.tomb.<node>.<token>`)
    // after a takeover: the place they were planted is the lock folder itself.
    const relativeOf = (path) => {
      for (const root of viewRoots) {
        if (path === root || path.startsWith(`${root}/`))
          return relative(root, path).replace(/^(ref-updates\/running\/[0-9a-f]{40})\.tomb\.[^/]+(\/|$)/, '$1$2');
      }
      return undefined;
    };
    /** relative original path → the corrupt/ entries that came from there (a name may be planted again once moved). */
    const byOriginal = new Map();
    const add = (key, value) => byOriginal.set(key, [...(byOriginal.get(key) ?? []), value]);
    const take = (key) => {
      const values = byOriginal.get(key);
      const value = values?.shift();
      if (values?.length === 0) byOriginal.delete(key);
      return value;
    };
    const reasonProblems = [];
    const corruptNames = list(corruptDir).filter((name) => !name.endsWith('.reason'));
    for (const name of corruptNames) {
      // A hostile entry planted in corrupt/ may itself be named `….reason`, or be a FIFO.
      const text = readStoreText(join(corruptDir, `${name}.reason`));
      if (text === undefined) {
        add(`?${name}`, { name, reason: undefined });
        continue;
      }
      if (text.includes(SECRET)) reasonProblems.push(`corrupt/${name}.reason quotes the secret`);
      let record;
      try {
        record = JSON.parse(text);
      } catch {
        reasonProblems.push(`corrupt/${name}.reason is not JSON`);
        continue;
      }
      const original = typeof record.originalPath === 'string' ? relativeOf(record.originalPath) : undefined;
      add(original ?? `?${name}`, { name, reason: record.reason });
    }
    // Well-formed tasks for a URL no remote has are parked in failed/<uriKey>/ under their own name.
    const failedDir = join(this.store, 'ref-updates', 'failed');
    const parkedNames = new Set();
    for (const uriKey of list(failedDir).filter((name) => LOCK_NAME.test(name))) {
      for (const name of list(join(failedDir, uriKey)).filter((file) => file.endsWith('.json') && !file.endsWith('.reason.json'))) {
        const text = readStoreText(join(failedDir, uriKey, name));
        if (text !== undefined && parsesToUri(text, hostileTaskUri(this.victim))) parkedNames.add(name);
      }
    }
    const plantedInCorrupt = new Set();
    let quarantined = 0;
    let parked = 0;
    let ignored = 0;
    const vanished = [];
    const removedAsOwn = [];
    const missingReason = [];
    // Newest first: of entries planted at one path, only the newest can still be there.
    const inPlace = new Set();
    for (const entry of [...this.planted].reverse()) {
      const rel = relative(this.store, entry.path);
      if (entry.folder === 'ref-updates/corrupt') plantedInCorrupt.add(entry.name);
      // A directory under a waiting folder's name is a waiting folder: its bad task-named file is
      // quarantined from where it lies, and the folder, emptied, is removed like any other.
      const waitingFolder = entry.kind === 'dir' && entry.folder === 'ref-updates/waiting' && /^[0-9a-f]{40}(\.bulk)?$/.test(entry.name);
      const innerQuarantined = waitingFolder && /^[0-9a-f]{40}\.json$/.test(entry.inner ?? '') && take(`${rel}/${entry.inner}`) !== undefined;
      if (!inPlace.has(rel) && typeOf(entry.path) === entry.type) {
        inPlace.add(rel);
        ignored++;
        continue;
      }
      const inLock = /^ref-updates\/running\/[0-9a-f]{40}$/.test(entry.folder);
      // Recovering a lock folder moves task-named files to waiting/ first; the bad ones are quarantined from there.
      if (take(rel) !== undefined || (inLock && /^[0-9a-f]{40}\.json$/.test(entry.name) && take(`ref-updates/waiting/${entry.name}`) !== undefined)) {
        quarantined++;
        continue;
      }
      if (innerQuarantined) {
        removedAsOwn.push(`${rel} (${entry.kind}, a waiting folder emptied of its bad task)`);
        continue;
      }
      // From waiting/, or from a lock folder by way of waiting/ (recovery moves task-named files there).
      if (entry.taskShaped && parkedNames.has(entry.name)) {
        parked++;
        continue;
      }
      // What the lock protocol takes for its own (store-records.ts removeBookkeeping): a regular
      // file named owner.json or *.tmp in a lock folder is removed with it; a directory in a lock
      // folder is a claim folder, and a directory named like a lock is an ownerless lock taken
      // over after lockStale: their task-named files are read where they lie (being bad, they go
      // to corrupt/ from there), the rest is removed, then the folder.
      const ownName = entry.name === 'owner.json' || entry.name.endsWith('.tmp');
      const lockLike = entry.folder === 'ref-updates/running' && LOCK_NAME.test(entry.name);
      if (entry.kind === 'dir' ? inLock || lockLike : inLock && entry.type === 'file' && ownName) {
        // A layout 1 node moved such a file to waiting/ first, and quarantined it from there.
        if (entry.inner !== undefined && /^[0-9a-f]{40}\.json$/.test(entry.inner) && take(`${rel}/${entry.inner}`) === undefined) {
          take(`ref-updates/waiting/${entry.inner}`);
        }
        removedAsOwn.push(`${rel} (${entry.kind})`);
        continue;
      }
      // A corrupt/ entry named after it but without a reason record.
      const unexplained = [...byOriginal.entries()].find(
        ([key, values]) => key.startsWith('?') && values[0].reason === undefined && values[0].name.startsWith(`${entry.name}.`),
      );
      if (unexplained !== undefined) {
        quarantined++;
        missingReason.push(`${rel} (${entry.kind}) moved to corrupt/${unexplained[1][0].name} without a .reason`);
        take(unexplained[0]);
      } else vanished.push(`${rel} (${entry.kind}, planted ${new Date(entry.at).toISOString()}) is gone and not in corrupt/`);
    }
    // What is left in corrupt/ and was not planted there is refrelay quarantining its own files.
    const foreignCorrupt = [...byOriginal.values()]
      .flat()
      .map((value) => value.name)
      .filter((name) => !plantedInCorrupt.has(name));
    const victimAfter = existsSync(this.victim) ? snapshot(this.victim) : '(victim folder gone)';
    return {
      planted: this.planted.length,
      quarantined,
      parked,
      ignored,
      removedAsOwn,
      vanished,
      missingReason,
      reasonProblems,
      ownFilesQuarantined: foreignCorrupt,
      victimIntact: victimAfter === victimBefore,
      // The entries (path and type; contents only as "changed") that differ, for finding the cause.
      victimChanges: victimDiff(victimBefore, victimAfter),
      byKind: this.counts,
      skipped: this.skipped,
    };
  }
}

/** Sets `made.created` once the name is ours, so a failure after that can undo it. */
function plant(path, kind, random, victim, made) {
  const createFile = () => {
    const fd = openSync(path, 'wx');
    made.created = true;
    return fd;
  };
  const writeNew = (content) => {
    const fd = createFile();
    try {
      writeFileSync(fd, content);
    } finally {
      closeSync(fd);
    }
  };
  switch (kind) {
    case 'bytes':
      return writeNew(randomBytes(random));
    case 'json':
      return writeNew(randomJson(random, victim, made));
    case 'sparse': {
      closeSync(createFile());
      // 1 MiB to 4 GiB of holes: a reader that trusts sizes would try to swallow it whole.
      const size = Math.floor(1024 * 1024 + random.next() * (4 * 1024 ** 3 - 1024 * 1024));
      execFileSync('truncate', ['-s', String(size), path]);
      return undefined;
    }
    case 'fifo':
      // mkfifo fails on a taken name; a FIFO would block an overwriting writer.
      execFileSync('mkfifo', [path], { stdio: 'ignore' });
      return undefined;
    case 'symlink-file':
      return symlinkSync(join(victim, 'secret.txt'), path);
    case 'symlink-dir':
      return symlinkSync(join(victim, 'dir'), path);
    case 'dir':
      mkdirSync(path);
      made.created = true;
      made.inner = random.pick(['owner.json', 'a.tmp', `${'d'.repeat(40)}.json`]);
      writeFileSync(join(path, made.inner), SECRET, { flag: 'wx' });
      return undefined;
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

function parsesToUri(text, uri) {
  try {
    return JSON.parse(text)?.uri === uri;
  } catch {
    return false;
  }
}

function typeOf(path) {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return 'symlink';
    if (stat.isFIFO()) return 'fifo';
    if (stat.isDirectory()) return 'dir';
    return 'file';
  } catch {
    return undefined;
  }
}

function isRealDir(path) {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function list(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Names, types and contents of everything under `dir`, as one comparable string. */
/** Snapshot lines present on one side only, content lines reduced to a marker: never the secret itself. */
function victimDiff(before, after) {
  const lines = (text) => text.split('\n').map((line) => (line.includes(' ') ? line : '(content)'));
  const a = lines(before);
  const b = lines(after);
  return [...a.filter((line) => !b.includes(line)).map((line) => `- ${line}`), ...b.filter((line) => !a.includes(line)).map((line) => `+ ${line}`)];
}

function snapshot(dir) {
  const parts = [];
  const walk = (at) => {
    for (const name of list(at).sort()) {
      const path = join(at, name);
      const type = typeOf(path);
      parts.push(`${relative(dir, path)} ${type}`);
      if (type === 'dir') walk(path);
      else if (type === 'file') parts.push(readFileSync(path, 'base64'));
    }
  };
  walk(dir);
  return parts.join('\n');
}
