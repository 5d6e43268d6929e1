import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { redactUrl } from '../runtime/redact.js';
import { FULL_SYNC_REF } from '../task/task.js';
import { Credentials } from '../config/secure-config.js';
import { createTarget, sshCreateArgv, sshProgram } from './create-repository.js';
import { envForDestination } from './destination-env.js';
import { isAbsentOrEmpty, isDirectory } from './local-paths.js';
import { pushFailure as failure, stderrTail } from './failure-class.js';
import { parsePushPorcelain } from './porcelain.js';
import { gitEnvironment, localRepoEnvironment } from './push-env.js';
import { readRefsFromFiles } from './ref-files.js';
import { limitsOf } from './push-limits.js';
import { headTarget } from './local-head.js';
import { projectExclusion } from '../config/ref-exclusion.js';
import { planPush, type PlannedRef } from './push-plan.js';
import type { Pusher, PushFailure, PushOutcome, PushRequest, RefOutcome } from './push-types.js';
import { completed, failureOf, outcome, type Run, type Step } from './push-run.js';
import { accepted, refOutcomes, resultOf } from './ref-outcomes.js';
import { runProcess, type RunResult } from './run-process.js';
import { splitDeclined, type ChunkAnswer } from './split-declined.js';
import type { SshConnectionReuse } from './ssh-reuse.js';
import { stopSignal, systemStopTime } from './stop-signal.js';
import { CURL_TRACE_LINE, parseRefLines, parseRetryAfter, reportProgress, withoutCurlTrace } from './git-text.js';

export { parseRetryAfter };

export type { Pusher, PushFailure, PushOutcome, PushRequest, RefOutcome, RefStatus } from './push-types.js';

export interface GitPusherOptions {
  /** The git binary; default `git` from PATH. */
  readonly git?: string;
  /** Added to the minimal environment git runs with, e.g. GIT_SSH_COMMAND for a test sshd. */
  readonly env?: Readonly<Record<string, string>>;
  /** Refspecs per git invocation, bounded so argv stays under ARG_MAX; default 2000. */
  readonly maxRefspecsPerPush?: number;
  /** Share one ssh master connection per destination host (see SshConnectionReuse). */
  readonly sshConnectionReuse?: SshConnectionReuse;
  /** HTTP(S) credentials per remote, from secure.config. */
  readonly credentials?: Credentials;
}

export const MAX_REFSPECS_PER_PUSH = 2000;
/** Between SIGTERM and SIGKILL of a stopped push. */
const KILL_GRACE_MS = 2000;
/** Beyond this many claimed refs, listing all local refs is cheaper than one pattern per ref. */
const MAX_REF_PATTERNS = 500;

/**
 * Pushes with our own `git push --porcelain` child: exact environment, per-ref
 * results, an idle limit and a deadline (`push-limits.ts`) and a process-group
 * kill that takes ssh down with git.
 */
export class GitPusher implements Pusher {
  private readonly git: string;
  private readonly env: Readonly<Record<string, string>>;
  private readonly chunkSize: number;
  private readonly sshReuse: SshConnectionReuse | undefined;
  private readonly credentials: Credentials;
  /** The operator's own GIT_SSH_COMMAND, which remotes without `sshCommand` start from. */
  private readonly operatorSshCommand: string | undefined;

  constructor(options: GitPusherOptions = {}) {
    this.git = options.git ?? 'git';
    this.env = gitEnvironment(process.env, options.env);
    this.credentials = options.credentials ?? Credentials.none;
    this.operatorSshCommand = options.env?.GIT_SSH_COMMAND;
    this.chunkSize = Math.max(1, options.maxRefspecsPerPush ?? MAX_REFSPECS_PER_PUSH);
    // Only for OpenSSH run through GIT_SSH_COMMAND: a GIT_SSH program may not take -o options.
    this.sshReuse = this.env.GIT_SSH_COMMAND === undefined ? undefined : options.sshConnectionReuse;
  }

  async push(request: PushRequest): Promise<PushOutcome> {
    // Absolute, because git ignores relative GIT_CEILING_DIRECTORIES entries.
    const localRepo = resolve(request.localRepo);
    const controlPath = this.sshReuse?.controlPath(request.uri);
    let env = envForDestination(this.env, request.uri, request.remote, { operatorSshCommand: this.operatorSshCommand, credentials: this.credentials });
    if (controlPath !== undefined && env.GIT_SSH_COMMAND !== undefined)
      env = { ...env, GIT_SSH_COMMAND: this.sshReuse!.sshCommand(env.GIT_SSH_COMMAND, controlPath) };
    // Over smart-http, curl's header trace is the only place git shows a Retry-After; bodies
    // stay out, and git redacts Authorization and cookies in it.
    if (/^https?:\/\//i.test(request.uri)) env = { ...env, GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' };
    const run: Run = {
      request: { ...request, localRepo },
      env: localRepoEnvironment(env, localRepo),
      stop: stopSignal(limitsOf(request.remote), request.signal, systemStopTime),
      startedAt: performance.now(),
      createAttempted: false,
      createdRepository: false,
      argv: [],
    };
    // A stopped push may hang on its host, inside the shared master connection, which holds the
    // push's pipes (mux clients hand their stdio to the master): the master goes with the push, so
    // nothing of it outlives the deadline. The next push to the host opens a fresh one.
    const endMaster = (): void => void this.sshReuse!.exit(controlPath!, this.env);
    if (controlPath !== undefined) run.stop.signal.addEventListener('abort', endMaster, { once: true });
    try {
      // Before anything touches the destination: not even a missing repository is created for it.
      if (!request.remote.replicatePermissions) {
        const head = await headTarget(localRepo, () => this.runGit(run, ['symbolic-ref', '-q', 'HEAD']));
        if (projectExclusion(request.remote, head) !== undefined) return outcome(run, 'ok', []);
      }
      return await this.pushAll(run);
    } catch (error) {
      // push() never throws: the scheduler always needs an outcome to act on.
      const message = `unexpected error while pushing: ${error instanceof Error ? error.message : String(error)}`;
      return outcome(run, 'failed', [], failure('permanent', message, ''));
    } finally {
      run.stop.signal.removeEventListener('abort', endMaster);
      run.stop.dispose();
    }
  }

  /** Ends the shared ssh connections (daemon stop). */
  async close(): Promise<void> {
    await this.sshReuse?.close(this.env);
  }

  /**
   * `intoNewRepository`: this push has just created the destination. It is empty, so the claimed
   * refs are not enough: everything the refspecs cover goes in (a full sync, as Gerrit runs after
   * creating a project), or `verify` would find the other branches and tags missing.
   */
  private async pushAll(run: Run, intoNewRepository = false): Promise<PushOutcome> {
    const { request } = run;
    const claimedRefs = intoNewRepository && !request.refs.includes(FULL_SYNC_REF) ? [...request.refs, FULL_SYNC_REF] : request.refs;
    const local = await this.readLocalRefs(run, claimedRefs);
    if ('failure' in local) return outcome(run, 'failed', [], local.failure);
    // Known without asking: an empty map also turns deletes of absent refs into no-ops.
    let remoteRefs: Map<string, string> | undefined = intoNewRepository ? new Map() : undefined;
    if (!intoNewRepository && claimedRefs.includes(FULL_SYNC_REF)) {
      const listed = await this.listRemoteRefs(run);
      if ('failure' in listed) return outcome(run, 'failed', [], listed.failure);
      remoteRefs = listed.ok;
    }
    const plan = planPush({ remote: request.remote, localRefs: local.ok, claimedRefs, remoteRefs });
    const refs: RefOutcome[] = [...plan.settled];
    for (let start = 0; start < plan.pushes.length; start += this.chunkSize) {
      const chunk = await this.pushChunk(run, plan.pushes.slice(start, start + this.chunkSize));
      // Planned for a repository that was not there; what earlier chunks reported went nowhere.
      if (chunk === 'created') return this.pushAll(run, true);
      refs.push(...chunk.refs);
      if (chunk.failure !== undefined) return outcome(run, 'failed', refs, chunk.failure);
    }
    return outcome(run, resultOf(refs), refs);
  }

  /** `created`: the destination was missing and is now created; the caller plans the push again. */
  private async pushChunk(run: Run, chunk: readonly PlannedRef[]): Promise<{ refs: RefOutcome[]; failure?: PushFailure } | 'created'> {
    const result = await this.gitPush(run, chunk);
    if (!completed(result)) {
      const failure = await this.createIfMissing(run, failureOf(run, this.git, result));
      return failure === undefined ? 'created' : { refs: [], failure };
    }
    const answer = this.chunkAnswer(run, chunk, result);
    if (answer.failure !== undefined || answer.declinedWithPush.length < 2) return answer;
    const byDst = new Map(chunk.map((ref) => [ref.dst, ref]));
    return splitDeclined(answer, async (dsts) => {
      const part = dsts.map((dst) => byDst.get(dst)!);
      const again = await this.gitPush(run, part);
      return completed(again) ? this.chunkAnswer(run, part, again) : { refs: [], declinedWithPush: [], failure: failureOf(run, this.git, again) };
    });
  }

  /** Per-ref results of a push that got as far as reporting them. */
  private chunkAnswer(run: Run, chunk: readonly PlannedRef[], result: RunResult): ChunkAnswer {
    const { refs, transientRejections, declinedWithPush } = refOutcomes(chunk, parsePushPorcelain(result.stdout));
    const tail = stderrTail(result.stderr);
    // With other refs taken, the destination works and only these refs are in trouble: they are
    // reported (and counted by the scheduler) instead of failing a push that delivered the rest.
    if (transientRejections.length > 0 && !refs.some(accepted)) {
      // The whole push is retried: landed refs come back up to date, and no ref is parked for a busy remote.
      const names = transientRejections.map((ref) => `${ref.dst} (${ref.detail ?? 'rejected'})`).join(', ');
      return { refs, declinedWithPush, failure: failure('transient', `the destination could not update ${names}`, tail) };
    }
    if (result.exitCode !== 0 && !refs.some((ref) => ref.status === 'rejected')) {
      return { refs, declinedWithPush, failure: failureOf(run, this.git, result) };
    }
    return { refs, declinedWithPush };
  }

  private gitPush(run: Run, chunk: readonly PlannedRef[]): Promise<RunResult> {
    const { request } = run;
    const progress = request.onProgress;
    // --no-verify: a local pre-push hook is meant for people, and must not block or slow replication.
    const options = ['push', '--porcelain', '--no-verify'];
    // git prints progress to a pipe only when asked; without it a large push that is moving looks
    // idle for as long as the pack takes, and the destination stays quiet while it unpacks.
    if (progress || request.remote.timeoutMs > 0) options.push('--progress');
    const refspecs = chunk.map((ref) => ref.refspec);
    run.argv = [this.git, ...options, '--', redactUrl(request.uri), ...refspecs];
    return this.untraced(
      run,
      runProcess(this.git, [...options, '--', request.uri, ...refspecs], {
        cwd: request.localRepo,
        env: run.env,
        signal: run.stop.signal,
        killGraceMs: KILL_GRACE_MS,
        onStderrLine: progress ? (line: string) => (CURL_TRACE_LINE.test(line) ? undefined : reportProgress(progress, line)) : undefined,
        onSpawn: request.onPushSpawn,
        onOutput: run.stop.activity,
      }),
    );
  }

  /** git's own stderr, without curl's trace lines; a Retry-After found there is kept on the run. */
  private async untraced(run: Run, running: Promise<RunResult>): Promise<RunResult> {
    const result = await running;
    if (run.env.GIT_TRACE_CURL === undefined) return result;
    const { stderr, retryAfterMs } = withoutCurlTrace(result.stderr);
    run.retryAfterMs = retryAfterMs ?? run.retryAfterMs;
    return { ...result, stderr };
  }

  private async readLocalRefs(run: Run, claimed: readonly string[]): Promise<Step<Map<string, string>>> {
    const patterns = claimed.includes(FULL_SYNC_REF) || claimed.length > MAX_REF_PATTERNS ? [] : claimed;
    if (patterns.length > 0) {
      // Found there, the repository exists: no separate look at the folder for the common case.
      const fromFiles = readRefsFromFiles(run.request.localRepo, patterns);
      if (fromFiles !== undefined) return { ok: fromFiles };
    }
    if (!(await isDirectory(run.request.localRepo))) {
      return { failure: failure('local-missing', `local repository ${run.request.localRepo} does not exist`, '') };
    }
    const result = await this.runGit(run, ['for-each-ref', '--format=%(objectname) %(refname)', '--', ...patterns]);
    if (result.exitCode !== 0) {
      if (/not a git repository/i.test(result.stderr)) {
        return { failure: failure('local-missing', `${run.request.localRepo} is not a git repository`, stderrTail(result.stderr)) };
      }
      return { failure: failureOf(run, this.git, result, 'reading local refs failed: ') };
    }
    return { ok: parseRefLines(result.stdout, ' ') };
  }

  /**
   * A full sync reads the destination's refs first, as Gerrit does: only refs
   * that differ are sent, which matters because git's cost per explicit
   * refspec grows with the number of local refs; and a mirror finds orphans.
   */
  private async listRemoteRefs(run: Run): Promise<Step<Map<string, string>>> {
    const result = await this.runGit(run, ['ls-remote', '--', run.request.uri]);
    if (result.exitCode === 0 && !result.killed) return { ok: parseRefLines(result.stdout, '\t') };
    const failure = await this.createIfMissing(run, failureOf(run, this.git, result));
    return failure === undefined ? { ok: new Map() } : { failure };
  }

  /** A missing destination is created once per push: undefined when it now exists, else the failure to report. */
  private async createIfMissing(run: Run, failed: PushFailure): Promise<PushFailure | undefined> {
    const mayCreate = failed.kind === 'missing-repository' && run.request.remote.createMissingRepositories && !run.createAttempted;
    return mayCreate ? this.createRepository(run) : failed;
  }

  private async createRepository(run: Run): Promise<PushFailure | undefined> {
    const target = createTarget(run.request.uri, run.request.localRepo);
    run.createAttempted = true;
    if (target.kind === 'impossible') return failure('permanent', target.message, '');
    let result: RunResult;
    if (target.kind === 'local') {
      // Never turn an existing directory full of other things into a repository.
      if (!(await isAbsentOrEmpty(target.path))) {
        return failure('permanent', `destination ${target.path} exists but is not a git repository`, '');
      }
      await mkdir(target.path, { recursive: true });
      result = await this.runGit(run, ['init', '--bare', '-q', '--', target.path]);
    } else {
      result = await runProcess('sh', sshCreateArgv(sshProgram(run.env), target), {
        env: run.env,
        signal: run.stop.signal,
        killGraceMs: KILL_GRACE_MS,
        onOutput: run.stop.activity,
      });
    }
    if (result.exitCode === 0 && !result.killed) {
      run.createdRepository = true;
      return undefined;
    }
    return failureOf(run, this.git, result, 'creating the destination repository failed: ');
  }

  /** A git command other than push, in the local repository, under the same limits. */
  private runGit(run: Run, args: string[]): Promise<RunResult> {
    const { stop } = run;
    return this.untraced(
      run,
      runProcess(this.git, args, { cwd: run.request.localRepo, env: run.env, signal: stop.signal, killGraceMs: KILL_GRACE_MS, onOutput: stop.activity }),
    );
  }
}
