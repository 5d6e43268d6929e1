import { pino } from 'pino';
import type { Log } from '../runtime/log.js';
import { prettyDestination } from './pretty-log.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'json' | 'pretty';

/** Pretty for a person at a terminal, JSON lines for everything else (journald, files, pipes). */
export function defaultLogFormat(out: { isTTY?: boolean } = process.stdout): LogFormat {
  return out.isTTY === true ? 'pretty' : 'json';
}

/** One object per event on stdout, with the node id on every line. */
export function createLogger(options: { level: LogLevel; nodeId: string; format?: LogFormat }): Log {
  const settings = { level: options.level, base: { node: options.nodeId }, timestamp: pino.stdTimeFunctions.isoTime };
  if ((options.format ?? 'json') === 'pretty') return pino(settings, prettyDestination(process.stdout));
  return pino(settings);
}
