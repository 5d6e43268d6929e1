// `enqueue`'s options, declared once. The hook path (main.ts → enqueue-command.ts) parses them by
// hand from this table, without loading yargs; commands.ts builds the yargs options, and so the
// help, from the same table.
import { UsageError } from '../errors.js';
import { configOption } from './config-option.js';

export interface EnqueueOption {
  /** Given as `--name`. */
  readonly name: string;
  /** Given as `-alias`. */
  readonly alias?: string;
  /** No defaults: a boolean is false unless given, a repeatable (`array`) string empty, a string unset. */
  readonly type: 'string' | 'boolean';
  readonly array?: true;
  readonly description: string;
}

export const ENQUEUE_OPTIONS = [
  { name: 'config', ...configOption.config },
  { name: 'project', type: 'string', description: 'project name (repository path under basePath, without .git)' },
  { name: 'ref', type: 'string', array: true, description: 'full ref name, repeatable' },
  { name: 'remote', type: 'string', array: true, description: 'only this remote, repeatable' },
  { name: 'stdin', type: 'boolean', description: 'read "<old> <new> <ref>" lines as post-receive / reference-transaction hooks get them' },
  { name: 'node-id', type: 'string', description: 'override replication.nodeId' },
  { name: 'quiet', alias: 'q', type: 'boolean', description: 'print nothing on success' },
] as const satisfies readonly EnqueueOption[];

type Value<O> = O extends { type: 'boolean' } ? boolean : O extends { array: true } ? string[] : string | undefined;

/** The parsed command line, keyed by option name as yargs keys it. */
export type EnqueueArgs = { -readonly [O in (typeof ENQUEUE_OPTIONS)[number] as O['name']]: Value<O> };

export function parseEnqueueArgs(argv: readonly string[]): EnqueueArgs {
  const values = Object.fromEntries(
    ENQUEUE_OPTIONS.map((option) => [option.name, option.type === 'boolean' ? false : 'array' in option ? [] : undefined]),
  ) as Record<string, string | string[] | boolean | undefined>;
  for (let index = 0; index < argv.length; index++) {
    const raw = argv[index]!;
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const flag = eq > 0 ? raw.slice(0, eq) : raw;
    const value = (): string => {
      if (eq > 0) return raw.slice(eq + 1);
      const next = argv[++index];
      if (next === undefined) throw new UsageError(`enqueue: ${flag} needs a value`);
      return next;
    };
    const option = ENQUEUE_OPTIONS.find((candidate) => flag === `--${candidate.name}` || ('alias' in candidate && flag === `-${candidate.alias}`));
    if (option === undefined) throw new UsageError(`enqueue: unknown argument ${JSON.stringify(raw)} (see refrelay enqueue --help)`);
    if (option.type === 'boolean') values[option.name] = true;
    else if ('array' in option) (values[option.name] as string[]).push(value());
    else values[option.name] = value();
  }
  const args = values as EnqueueArgs;
  if (args.stdin && args.ref.length > 0) throw new UsageError('enqueue: use either --stdin or --ref, not both');
  if (!args.stdin && args.ref.length === 0) throw new UsageError('enqueue: give --ref at least once, or --stdin');
  if (!args.stdin && args.project === undefined) throw new UsageError('enqueue: --project is required with --ref');
  return args;
}
