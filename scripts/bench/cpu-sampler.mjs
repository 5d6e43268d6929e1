// Where the CPU goes during a benchmark window: one process's CPU time and the whole machine's
// busy time, sampled from /proc (Linux only; elsewhere the figures are simply not reported).
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function statFields(pid) {
  return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
}

function processTicksMs(pid) {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime + stime
}

/** CPU of the process's children it has reaped, theirs included (cutime + cstime): its git pushes. */
function childrenTicksMs(pid) {
  const fields = statFields(pid);
  return (Number(fields[13]) + Number(fields[14])) * TICK_MS;
}

/**
 * CPU time of the process's threads from the scheduler's nanosecond counts (the ticks of
 * /proc/PID/stat are 10 ms). A thread that ends takes its time with it; the node's threads live
 * as long as it does. Ticks where the kernel keeps no schedstat.
 */
export function processCpuMs(pid) {
  let ns = 0;
  let read = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      read++;
    } catch {
      // the thread ended between the listing and the read, or there is no schedstat
    }
  }
  return read > 0 ? ns / 1e6 : processTicksMs(pid);
}

function machineBusyMs() {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3] + cpu[4];
  return (cpu.reduce((a, b) => a + b, 0) - idle) * TICK_MS;
}

/** Samples every `everyMs`; `between(fromMs, toMs)` answers for a window in Date.now() terms. */
export function startCpuSampler(pid, everyMs = 20) {
  const samples = [];
  const sample = () => {
    try {
      samples.push({ at: Date.now(), node: processCpuMs(pid), children: childrenTicksMs(pid), machine: machineBusyMs() });
    } catch {
      // not Linux, or the process is gone
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  const nearest = (at) => samples.reduce((best, s) => (Math.abs(s.at - at) < Math.abs(best.at - at) ? s : best), samples[0]);
  return {
    stop: () => clearInterval(timer),
    between: (fromMs, toMs) => {
      if (samples.length < 2) return undefined;
      const [a, b] = [nearest(fromMs), nearest(toMs)];
      return { nodeMs: b.node - a.node, childrenMs: b.children - a.children, machineMs: b.machine - a.machine };
    },
  };
}

export function machineSampler() {
  const start = machineBusyMs();
  return () => machineBusyMs() - start;
}
