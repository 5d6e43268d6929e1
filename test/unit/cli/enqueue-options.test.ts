import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCommands } from '../../../src/cli/commands.js';
import { ENQUEUE_OPTIONS, parseEnqueueArgs } from '../../../src/cli/enqueue-options.js';
import { UsageError } from '../../../src/errors.js';

/** `refrelay enqueue --help` as yargs prints it, whitespace runs made single spaces (yargs wraps columns). */
async function enqueueHelp(): Promise<string> {
  const printed: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void printed.push(parts.join(' ')));
  expect(await runCommands(['enqueue', '--help'])).toBe(0);
  return printed.join('\n').replace(/\s+/g, ' ');
}

/** Arguments that complete a valid command line next to the option under test. */
const rest = (name: string): string[] => (name === 'ref' ? ['--project', 'team/app'] : name === 'stdin' ? [] : ['--stdin']);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("enqueue's one option table", () => {
  it('the yargs help lists every option of the table, with its alias and description, and no other', async () => {
    const help = await enqueueHelp();
    for (const option of ENQUEUE_OPTIONS) {
      const flags = 'alias' in option ? `-${option.alias}, --${option.name}` : `--${option.name}`;
      expect(help).toContain(`${flags} ${option.description} [${'array' in option ? 'array' : option.type}]`);
    }
    const options = help.slice(help.indexOf('Options:'), help.indexOf('Examples:'));
    const listed = [...options.matchAll(/ --([a-z-]+) /g)].map((match) => match[1]).filter((name) => name !== 'help' && name !== 'version');
    expect(listed).toEqual(ENQUEUE_OPTIONS.map((option) => option.name));
  });

  it.each(ENQUEUE_OPTIONS.map((option) => [option.name, option] as const))('the hook path parser takes --%s (and its alias)', (name, option) => {
    const spellings = ['alias' in option ? `-${option.alias}` : undefined, `--${name}`].filter((flag) => flag !== undefined);
    for (const flag of spellings) {
      const given = option.type === 'boolean' ? [flag] : [flag, 'value-1'];
      const args = parseEnqueueArgs([...given, ...rest(name)]) as Record<string, unknown>;
      expect(args[name]).toEqual(option.type === 'boolean' ? true : 'array' in option ? ['value-1'] : 'value-1');
    }
    if (option.type === 'string') {
      const args = parseEnqueueArgs([`--${name}=value-2`, ...rest(name)]) as Record<string, unknown>;
      expect(args[name]).toEqual('array' in option ? ['value-2'] : 'value-2');
      expect(() => parseEnqueueArgs([...rest(name), `--${name}`])).toThrow(new UsageError(`enqueue: --${name} needs a value`));
    }
  });

  it('the hook path parser leaves an option not given false, empty or unset', () => {
    expect(parseEnqueueArgs(['--stdin'])).toEqual({
      config: undefined,
      project: undefined,
      ref: [],
      remote: [],
      stdin: true,
      'node-id': undefined,
      quiet: false,
    });
  });

  it('the hook path parser refuses an option outside the table, pointing at the help', () => {
    for (const unknown of ['--nosuch', '--nosuch=1', '-x', '--q', 'refs/heads/main']) {
      expect(() => parseEnqueueArgs(['--stdin', unknown])).toThrow(
        new UsageError(`enqueue: unknown argument ${JSON.stringify(unknown)} (see refrelay enqueue --help)`),
      );
    }
  });
});
