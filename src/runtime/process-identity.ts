import { closeSync, openSync, readSync, statSync } from 'node:fs';

/**
 * What Linux says about a process, enough to tell one process from a later one that reuses its
 * pid: the start time (clock ticks after boot, never changes for a process) and the machine's
 * boot id (the start time only means something within one boot). The parsers are pure, so they
 * are tested on captured /proc text; the reads return undefined when there is nothing to read
 * (not Linux, the process gone, /proc hidden).
 */

/** /proc/<pid>/stat is a few hundred bytes and cmdline's first word is all we want: a cap keeps a huge command line from costing anything. */
const READ_CAP_BYTES = 4096;
/** A boot id is a 36-character UUID. */
const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface ProcStat {
  /** One letter: R, S, D, T, Z (zombie), X (dead), … */
  readonly state: string;
  /** Parent pid (field 4): 0 when the parent is outside this pid namespace. */
  readonly ppid: number;
  /** Process group id (field 5). */
  readonly pgrp: number;
  /** Clock ticks after boot at which the process started (field 22). */
  readonly startTime: number;
}

function naturalNumber(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,16}$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * Fields of `/proc/<pid>/stat`. The second field, the command name in parentheses, may itself
 * hold spaces and parentheses (a program may be named anything), so the fields are counted from
 * after the last `)`: the text after it starts with field 3.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const fields = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  const state = fields[0];
  const ppid = naturalNumber(fields[4 - 3]);
  const pgrp = naturalNumber(fields[5 - 3]);
  const startTime = naturalNumber(fields[22 - 3]);
  if (state === undefined || !/^[A-Za-z]$/.test(state) || ppid === undefined || pgrp === undefined || startTime === undefined) return undefined;
  return { state, ppid, pgrp, startTime };
}

/** `/proc/<pid>/cmdline`: the arguments, each ended by a NUL. Empty for a zombie or a kernel thread. */
export function parseCmdline(text: string): string[] {
  if (text === '') return [];
  const args = text.split('\0');
  if (args.at(-1) === '') args.pop();
  return args;
}

/** `/proc/sys/kernel/random/boot_id`: a UUID and a newline; anything else is not one. */
export function parseBootId(text: string): string | undefined {
  const id = text.trim();
  return BOOT_ID.test(id) ? id : undefined;
}

/** At most READ_CAP_BYTES of a /proc file, or undefined when it cannot be read. */
function readProc(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(READ_CAP_BYTES);
    let length = 0;
    // /proc files may be returned in several pieces; stop at the end or at the cap.
    for (;;) {
      const read = readSync(fd, buffer, length, READ_CAP_BYTES - length, null);
      if (read === 0) break;
      length += read;
      if (length === READ_CAP_BYTES) break;
    }
    return buffer.toString('utf8', 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function validPid(pid: number): boolean {
  return Number.isSafeInteger(pid) && pid > 0;
}

export function readProcStat(pid: number): ProcStat | undefined {
  if (!validPid(pid)) return undefined;
  const text = readProc(`/proc/${pid}/stat`);
  return text === undefined ? undefined : parseProcStat(text);
}

/** The arguments of `pid`, as far as the first READ_CAP_BYTES of its command line go. */
export function readCmdline(pid: number): string[] | undefined {
  if (!validPid(pid)) return undefined;
  const text = readProc(`/proc/${pid}/cmdline`);
  return text === undefined ? undefined : parseCmdline(text);
}

/** Constant for as long as this process lives (a reboot ends it), so it is read once. */
let bootIdRead = false;
let bootIdValue: string | undefined;

export function readBootId(): string | undefined {
  if (!bootIdRead) {
    const text = readProc('/proc/sys/kernel/random/boot_id');
    bootIdValue = text === undefined ? undefined : parseBootId(text);
    bootIdRead = true;
  }
  return bootIdValue;
}

/** The user a process runs as (the owner of its /proc folder), or undefined without /proc. */
export function readProcessUid(pid: number): number | undefined {
  if (!validPid(pid)) return undefined;
  try {
    return statSync(`/proc/${pid}`).uid;
  } catch {
    return undefined;
  }
}

/** This process's group, or undefined without /proc. */
export function ownProcessGroup(): number | undefined {
  const text = readProc('/proc/self/stat');
  return text === undefined ? undefined : parseProcStat(text)?.pgrp;
}
