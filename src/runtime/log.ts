/** The logging port the core writes to; pino satisfies it, tests pass a recorder. */
export interface Log {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export const silentLog: Log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
