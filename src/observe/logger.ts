import { pino } from 'pino';
import type { Log } from './log.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** JSON lines on stdout, one object per event, with the node id on every line. */
export function createLogger(options: { level: LogLevel; nodeId: string }): Log {
  return pino({ level: options.level, base: { node: options.nodeId }, timestamp: pino.stdTimeFunctions.isoTime });
}
