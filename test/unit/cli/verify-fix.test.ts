import { describe, expect, it } from 'vitest';
import { verifyExitCode } from '../../../src/cli/verify-fix.js';

describe('verifyExitCode', () => {
  it('plain verify: 0 only when every destination is in sync, else 1', () => {
    expect(verifyExitCode(['in-sync', 'in-sync'], undefined)).toBe(0);
    expect(verifyExitCode(['in-sync', 'drift'], undefined)).toBe(1);
    expect(verifyExitCode(['in-sync', 'unreachable'], undefined)).toBe(1);
  });

  it('--fix: queued drift is 0, an unreachable destination 4, a repair not queued 1 whatever else', () => {
    expect(verifyExitCode(['in-sync'], { tasks: 0, queued: 0 })).toBe(0);
    expect(verifyExitCode(['drift', 'drift'], { tasks: 2, queued: 2 })).toBe(0);
    expect(verifyExitCode(['drift', 'unreachable'], { tasks: 1, queued: 1 })).toBe(4);
    expect(verifyExitCode(['drift', 'unreachable'], { tasks: 1, queued: 0, error: 'store not mounted' })).toBe(1);
  });
});
