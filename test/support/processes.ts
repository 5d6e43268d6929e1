import { execFileSync } from 'node:child_process';

export interface ProcessEntry {
  readonly pid: number;
  readonly pgid: number;
  readonly stat: string;
  readonly args: string;
}

/** Live processes (zombies excluded) whose command line contains `text`, this test runner excluded. */
export function processesWith(text: string): ProcessEntry[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  const found: ProcessEntry[] = [];
  for (const line of out.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (match === null) continue;
    const [, pid, pgid, stat, args] = match as unknown as [string, string, string, string, string];
    if (Number(pid) === process.pid || stat.startsWith('Z') || !args.includes(text) || args.startsWith('ps ')) continue;
    found.push({ pid: Number(pid), pgid: Number(pgid), stat, args });
  }
  return found;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers signal 0; it is not running.
  try {
    const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return stat !== '' && !stat.startsWith('Z');
  } catch {
    return false;
  }
}

/** SIGKILL the process groups of every live process whose command line contains `text`. */
export function killGroupsWith(text: string): void {
  const ownGroup = Number(execFileSync('ps', ['-o', 'pgid=', '-p', String(process.pid)], { encoding: 'utf8' }).trim());
  for (const entry of processesWith(text)) {
    if (entry.pgid === ownGroup || entry.pgid <= 1) continue;
    try {
      process.kill(-entry.pgid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
