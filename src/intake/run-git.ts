import { runProcess } from '../push/run-process.js';

/**
 * One short git command of an operator's check (`verify`, `wait`): its output, and a kill of its
 * whole process group at the timeout (SIGTERM, then SIGKILL at once), so an ssh it started cannot
 * outlive it. Never throws: a command that could not start resolves with a null code and the
 * reason in stderr.
 */
export async function runGit(
  args: string[],
  cwd: string | undefined,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const result = await runProcess('git', args, { ...(cwd === undefined ? {} : { cwd }), env, signal: AbortSignal.timeout(timeoutMs), killGraceMs: 0 });
  if (result.spawnError !== undefined) return { code: null, stdout: result.stdout, stderr: result.spawnError.message };
  return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}
