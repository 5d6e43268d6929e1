import { describe, expect, it } from 'vitest';
import { DEFAULT_SSH_COMMAND, gitEnvironment } from '../../../src/push/push-env.js';

describe('gitEnvironment', () => {
  it('starts from nothing but PATH and HOME, forces C locale and no prompts, and defaults a batch-mode ssh', () => {
    const env = gitEnvironment({ PATH: '/bin', HOME: '/root', GIT_DIR: '/elsewhere', LC_ALL: 'de_DE.UTF-8', SSH_AUTH_SOCK: '/tmp/agent' });
    expect(env).toEqual({
      PATH: '/bin',
      HOME: '/root',
      LANG: 'C',
      GIT_TERMINAL_PROMPT: '0',
      GIT_SSH_COMMAND: DEFAULT_SSH_COMMAND,
      SSH_AUTH_SOCK: '/tmp/agent',
    });
    expect(DEFAULT_SSH_COMMAND).toBe('ssh -o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=3');
  });

  it("lets the caller's env replace the ssh command, or bring GIT_SSH instead", () => {
    expect(gitEnvironment({}, { GIT_SSH_COMMAND: 'ssh -i k' }).GIT_SSH_COMMAND).toBe('ssh -i k');
    const withProgram = gitEnvironment({}, { GIT_SSH: '/usr/local/bin/my-ssh' });
    expect(withProgram.GIT_SSH_COMMAND).toBeUndefined();
    expect(withProgram.GIT_SSH).toBe('/usr/local/bin/my-ssh');
  });
});
