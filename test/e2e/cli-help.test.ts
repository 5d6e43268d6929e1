import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { repoRoot } from '../support/paths.js';

const COMMANDS = [
  [],
  ['config'],
  ['config', 'check'],
  ['enqueue'],
  ['status'],
  ['daemon'],
  ['hook'],
  ['hook', 'install'],
  ['hook', 'uninstall'],
  ['replicate'],
  ['verify'],
  ['wait'],
  ['retry'],
  ['failed'],
  ['failed', 'list'],
  ['failed', 'drop'],
  ['import-gerrit-queue'],
];

describe('refrelay --help', () => {
  it.each(COMMANDS.map((command) => [command.join(' ') || '(top level)', command] as const))('%s --help exits 0 and shows examples', (_name, command) => {
    const result = runCli([...command, '--help']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Examples:\n {2}refrelay /m);
  });

  it('lists every command at the top level, and the exit codes', () => {
    const result = runCli(['--help']);
    for (const command of new Set(COMMANDS.map((words) => words[0]).filter((word) => word !== undefined))) {
      expect(result.stdout).toMatch(new RegExp(`^ {2}refrelay ${command}\\b`, 'm'));
    }
    expect(result.stdout.replace(/\s+/g, ' ')).toContain(
      'Exit codes: 0 ok, 1 failed work, 2 usage error, 3 invalid configuration, 4 destinations unreachable (verify --fix, wait), 5 refrelay could not start (a build file or dependency of its installation is missing).',
    );
  });

  it('verify --help shows the fix-and-drain example and the exit codes that make it work', () => {
    const result = runCli(['verify', '--help']);
    expect(result.stdout).toContain('\n  refrelay verify --fix && refrelay daemon --drain\n');
    // yargs wraps the epilogue; compare the words.
    expect(result.stdout.slice(result.stdout.indexOf('Exit codes:')).replace(/\s+/g, ' ').trim()).toBe(
      'Exit codes: 0 every destination in sync, 1 drift or an unreachable destination, 2 a pattern that matches no project, 3 invalid configuration. ' +
        'With --fix: 0 in sync or every repair queued, 1 a repair could not be queued (the store could not be written), ' +
        '4 a destination was unreachable (the repairs for the others are queued).',
    );
  });

  it('a command group named alone points at its own help', () => {
    for (const group of ['config', 'hook']) {
      const result = runCli([group]);
      expect(result.stderr).toBe(`refrelay: name a ${group} command\n(see refrelay ${group} --help)\n`);
      expect(result.status).toBe(2);
    }
  });

  it.each(COMMANDS.map((command) => [command.join(' ') || '(top level)', command] as const))(
    "a usage error in %s points at that command's help",
    (_name, command) => {
      const result = runCli([...command, '--nosuch']);
      const help = ['refrelay', ...command, '--help'].join(' ');
      // A group or a command missing its argument says that first; the pointer is the same.
      const first =
        command.length === 0 || (command.length === 1 && ['config', 'hook', 'failed'].includes(command[0]!))
          ? `name a ${command[0] === undefined ? '' : `${command[0]} `}command`
          : command[0] === 'import-gerrit-queue'
            ? 'Not enough non-option arguments: got 0, need at least 1'
            : command[0] === 'wait'
              ? 'Missing required arguments: project, ref'
              : 'Unknown argument: nosuch';
      expect(result.stderr).toBe(
        command[0] === 'enqueue' ? `refrelay: enqueue: unknown argument "--nosuch" (see ${help})\n` : `refrelay: ${first}\n(see ${help})\n`,
      );
      expect(result.status).toBe(2);
    },
  );

  it('--version prints the version of package.json', () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const result = runCli(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`${version}\n`);
  });
});
