import { describe, expect, it } from 'vitest';
import type { Log } from '../../../src/runtime/log.js';
import { settleRefs } from '../../../src/schedule/settle-refs.js';
import type { FailureReason } from '../../../src/store/store-types.js';
import type { Task } from '../../../src/task/task.js';

function recordingLog(): Log & { lines: Array<{ level: string; fields: object; msg: string | undefined }> } {
  const lines: Array<{ level: string; fields: object; msg: string | undefined }> = [];
  const at =
    (level: string) =>
    (fields: object, msg?: string): void =>
      void lines.push({ level, fields, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('settling the refs of a push answered ref by ref', () => {
  it("logs every parked ref at warn with its project, ref, remote, URI (redacted) and git's reason", async () => {
    const parked: Array<[Task, FailureReason]> = [];
    const log = recordingLog();
    const store = { parkFailed: async (task: Task, reason: FailureReason) => (parked.push([task, reason]), { uriKey: 'k', name: 'n' }) };
    const unit = { project: 'team/app', uri: 'https://bot:s3cret@dr.example.com/team/app.git', remote: 'dr' };

    const settled = await settleRefs(
      { store, log },
      unit,
      [
        { ref: 'refs/heads/main', dst: 'refs/heads/main', status: 'updated' },
        { ref: 'refs/heads/blocked', dst: 'refs/heads/blocked', status: 'rejected', detail: '[remote rejected] (pre-receive hook declined)' },
      ],
      undefined,
      3,
    );

    expect(settled.parked).toBe(1);
    expect(parked.map(([task]) => task.refs)).toEqual([['refs/heads/blocked']]);
    expect(log.lines).toEqual([
      {
        level: 'warn',
        msg: 'ref parked in failed/',
        fields: {
          project: 'team/app',
          ref: 'refs/heads/blocked',
          remote: 'dr',
          uri: 'https://bot:***@dr.example.com/team/app.git',
          reason: 'rejected by the destination: [remote rejected] (pre-receive hook declined)',
        },
      },
    ]);
  });

  it('logs nothing when every ref landed', async () => {
    const log = recordingLog();
    const store = { parkFailed: async () => ({ uriKey: 'k', name: 'n' }) };
    await settleRefs(
      { store, log },
      { project: 'app', uri: '/d/app.git', remote: 'dr' },
      [{ ref: 'refs/heads/main', dst: 'refs/heads/main', status: 'new' }],
      undefined,
      3,
    );
    expect(log.lines).toEqual([]);
  });
});
