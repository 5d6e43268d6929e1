// Source repositories (whose post-receive hook runs `refrelay enqueue`), destinations that record
// overlapping pushes, and the driver: a developer making real `git push`es at a steady pace.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from './infra.mjs';

/** Hermetic git: no system or user config, fixed identity. */
export const gitEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME ?? '/root',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Chaos Driver',
  GIT_AUTHOR_EMAIL: 'chaos@example.com',
  GIT_COMMITTER_NAME: 'Chaos Driver',
  GIT_COMMITTER_EMAIL: 'chaos@example.com',
  GIT_TERMINAL_PROMPT: '0',
};

export function gitSync(cwd, args, input) {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], input });
}

function gitAsync(cwd, args, env = gitEnv) {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || error.message}`), { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** `refname → objectname` of a repository on disk. */
export function refsOf(repo) {
  const out = gitSync(repo, ['for-each-ref', '--format=%(refname) %(objectname)']);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ')),
  );
}

export function writeHook(repo, name, body) {
  writeFileSync(join(repo, 'hooks', name), body, { mode: 0o755 });
}

/** A bare source repository whose post-receive queues every update through the CLI, against `hookConfig`. */
export function makeSource(path, cli, hookConfig) {
  mkdirSync(path, { recursive: true });
  gitSync(path, ['init', '-q', '--bare', '-b', 'main']);
  writeHook(path, 'post-receive', `#!/bin/sh\nexec "${process.execPath}" "${cli}" enqueue --stdin --config "${hookConfig}"\n`);
}

/**
 * A bare destination that sleeps in pre-receive and records every push that overlaps another one
 * to the same repository. A marker left by a push killed mid-hook (its pid is gone or a zombie) is
 * stale, not an overlap: a killed `file://` push takes its hook down with it.
 */
export function makeRecordingDestination(path, sleepSeconds) {
  mkdirSync(path, { recursive: true });
  gitSync(path, ['init', '-q', '--bare', '-b', 'main']);
  writeHook(
    path,
    'pre-receive',
    [
      '#!/bin/sh',
      'marker="$GIT_DIR/push-in-progress"',
      'now() { date -u +%Y-%m-%dT%H:%M:%S.%NZ; }',
      'take() { mkdir "$marker" 2>/dev/null && echo $$ > "$marker/pid"; }',
      // A killed hook stays a zombie until init reaps it, and `kill -0` calls a zombie alive.
      'alive() { st=$(sed \'s/^.*) //\' "/proc/$1/stat" 2>/dev/null | cut -d" " -f1); [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]; }',
      'mine=0',
      'if take; then mine=1',
      'else',
      '  other=$(cat "$marker/pid" 2>/dev/null)',
      '  if [ -n "$other" ] && ! alive "$other" && [ "$(cat "$marker/pid" 2>/dev/null)" = "$other" ]; then',
      '    rm -rf "$marker"',
      '    if take; then mine=1; echo "$(now) stale marker of pid $other removed" >> "$GIT_DIR/stale-markers.log"; fi',
      '  fi',
      '  [ "$mine" = 1 ] || echo "$(now) overlap: pid $$ while pid ${other:-?} pushes" >> "$GIT_DIR/overlaps.log"',
      'fi',
      `sleep ${sleepSeconds}`,
      'cat > /dev/null',
      '[ "$mine" = 1 ] && rm -rf "$marker"',
      'exit 0',
      '',
    ].join('\n'),
  );
  writeHook(path, 'post-receive', '#!/bin/sh\nrefs=$(wc -l)\necho "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ) push $refs" >> "$GIT_DIR/pushes.log"\n');
}

function lines(path) {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
}

export function destinationRecord(path) {
  return {
    pushes: lines(join(path, 'pushes.log')).length,
    overlaps: lines(join(path, 'overlaps.log')),
    staleMarkers: lines(join(path, 'stale-markers.log')).length,
  };
}

/**
 * Commits made with plumbing in a private repository per project (no checkouts), then really
 * pushed into the source: new branches, updates, several refs at once, forced rewrites, tags
 * and deletes, at a steady pace, until stopped.
 */
export class Driver {
  constructor({ root, projects, sourceOf, random }) {
    this.projects = projects;
    this.sourceOf = sourceOf;
    this.random = random;
    this.work = new Map();
    this.stopped = false;
    this.stats = { pushes: 0, refUpdates: 0, byKind: {}, enqueueFailures: [], pushFailures: [], spooled: {} };
    this.serial = 0;
    for (const project of projects) {
      const dir = join(root, 'work', project);
      mkdirSync(dir, { recursive: true });
      gitSync(dir, ['init', '-q', '--bare']);
      this.work.set(project, { dir, branches: new Set(), tags: 0 });
    }
  }

  /** One commit on top of `parent` (or a root commit), with unique content. */
  async commit(project, parent) {
    const { dir } = this.work.get(project);
    const n = ++this.serial;
    const env = { ...gitEnv, GIT_AUTHOR_DATE: `${1767225600 + n} +0000`, GIT_COMMITTER_DATE: `${1767225600 + n} +0000` };
    const blob = (await gitWithInput(dir, ['hash-object', '-w', '--stdin'], `change ${n} of ${project} ${this.random.next()}\n`)).trim();
    const tree = (await gitWithInput(dir, ['mktree'], `100644 blob ${blob}\tfile.txt\n`)).trim();
    const args = ['commit-tree', tree, '-m', `change ${n}`];
    if (parent !== undefined) args.push('-p', parent);
    return (await gitAsync(dir, args, env)).stdout.trim();
  }

  async tip(project, branch) {
    const { dir } = this.work.get(project);
    try {
      return (await gitAsync(dir, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`])).stdout.trim();
    } catch {
      return undefined;
    }
  }

  async setBranch(project, branch, commit) {
    await gitAsync(this.work.get(project).dir, ['update-ref', `refs/heads/${branch}`, commit]);
    this.work.get(project).branches.add(branch);
  }

  /** Really push `refspecs` into the source; the hook's output must say it queued the update. */
  async push(project, refspecs, kind) {
    const { dir } = this.work.get(project);
    try {
      const { stderr } = await gitAsync(dir, ['push', '--porcelain', this.sourceOf(project), ...refspecs]);
      this.stats.pushes++;
      this.stats.refUpdates += refspecs.length;
      this.stats.byKind[kind] = (this.stats.byKind[kind] ?? 0) + 1;
      // A store that cannot be written makes the hook spool the update locally (exit 0, a warning).
      const spooled = /remote: refrelay: the store at .* cannot be written \(([^)]*)\); the update is spooled in/.exec(stderr);
      if (spooled !== null) this.stats.spooled[spooled[1]] = (this.stats.spooled[spooled[1]] ?? 0) + 1;
      else if (!/remote: refrelay: queued \d+ task/.test(stderr))
        this.stats.enqueueFailures.push(`${project} ${refspecs.join(' ')}: ${stderr.trim().slice(0, 500)}`);
    } catch (error) {
      this.stats.pushFailures.push(`${project} ${refspecs.join(' ')}: ${error.message.slice(0, 500)}`);
    }
  }

  /** Every project gets main before the nodes start. */
  async seed() {
    for (const project of this.projects) {
      await this.setBranch(project, 'main', await this.commit(project, undefined));
      await this.push(project, ['refs/heads/main:refs/heads/main'], 'seed');
    }
  }

  async step() {
    const project = this.random.pick(this.projects);
    const work = this.work.get(project);
    const branches = [...work.branches];
    const others = branches.filter((branch) => branch !== 'main');
    const roll = this.random.next();
    if (roll < 0.45) {
      const branch = this.random.pick(branches);
      await this.setBranch(project, branch, await this.commit(project, await this.tip(project, branch)));
      await this.push(project, [`refs/heads/${branch}:refs/heads/${branch}`], 'update');
    } else if (roll < 0.63) {
      const branch = `b${++this.serial}`;
      await this.setBranch(project, branch, await this.commit(project, await this.tip(project, this.random.pick(branches))));
      await this.push(project, [`refs/heads/${branch}:refs/heads/${branch}`], 'new branch');
    } else if (roll < 0.75 && others.length > 0) {
      const branch = this.random.pick(others);
      await gitAsync(work.dir, ['update-ref', '-d', `refs/heads/${branch}`]);
      work.branches.delete(branch);
      await this.push(project, [`:refs/heads/${branch}`], 'delete');
    } else if (roll < 0.85) {
      const tag = `t${++this.serial}`;
      const target = await this.tip(project, this.random.pick(branches));
      await gitAsync(work.dir, ['update-ref', `refs/tags/${tag}`, target]);
      await this.push(project, [`refs/tags/${tag}:refs/tags/${tag}`], 'tag');
    } else if (roll < 0.94 && branches.length > 1) {
      const picked = this.random.shuffle(branches).slice(0, 3);
      for (const branch of picked) await this.setBranch(project, branch, await this.commit(project, await this.tip(project, branch)));
      await this.push(
        project,
        picked.map((branch) => `refs/heads/${branch}:refs/heads/${branch}`),
        'several refs',
      );
    } else {
      // A rewrite: the new tip does not contain the old one.
      const branch = this.random.pick(branches);
      const tip = await this.tip(project, branch);
      const parent = (await gitAsync(work.dir, ['rev-list', '--max-count=1', '--skip=1', tip])).stdout.trim() || undefined;
      await this.setBranch(project, branch, await this.commit(project, parent));
      await this.push(project, [`+refs/heads/${branch}:refs/heads/${branch}`], 'forced rewrite');
    }
  }

  /** Pushes until `stop()`, one at a time, `pauseMs()` apart. */
  async run(pauseMs) {
    while (!this.stopped) {
      try {
        await this.step();
      } catch (error) {
        this.stats.pushFailures.push(`driver step: ${error.message.slice(0, 500)}`);
      }
      await sleep(pauseMs());
    }
  }

  stop() {
    this.stopped = true;
  }
}

function gitWithInput(cwd, args, input) {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, { cwd, env: gitEnv, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
    child.stdin.end(input);
  });
}
