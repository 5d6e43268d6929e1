const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Readonly<Record<number, string>> = { 20: '\u001b[90m', 30: '\u001b[32m', 40: '\u001b[33m', 50: '\u001b[31m', 60: '\u001b[31m' };
const RESET = '\u001b[0m';
/** Fields every line has, shown in the line's head rather than repeated as key=value. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'node']);

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

/**
 * One pino JSON line as a line for people: `12:03:04.512 INFO  pushed  remote=dr uri=… refs=3`.
 * The fields are the same as in JSON (already redacted); a line that is not JSON passes as is.
 */
export function prettyLine(line: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof record.level === 'number' ? record.level : 30;
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const name = (LEVELS[level] ?? String(level)).padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !HEAD_FIELDS.has(key))
    .map(([key, value]) => `${key}=${formatValue(value)}`)
    .join(' ');
  const head = colour ? `${COLOURS[level] ?? ''}${name}${RESET}` : name;
  return `${time} ${head} ${String(record.msg ?? '')}${fields === '' ? '' : `  ${fields}`}\n`;
}

/** A pino destination that writes pretty lines to `out`. */
export function prettyDestination(out: NodeJS.WritableStream & { isTTY?: boolean }): { write(line: string): boolean } {
  const colour = out.isTTY === true && process.env.NO_COLOR === undefined;
  return {
    write: (chunk: string) => {
      for (const line of chunk.split('\n')) if (line !== '') out.write(prettyLine(line, colour));
      return true;
    },
  };
}
