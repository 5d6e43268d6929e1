import { describe, expect, it } from 'vitest';
import { LockRecovery, type ProcessControl } from '../../../src/daemon/lock-recovery.js';
import type { RunningProcess } from '../../../src/daemon/orphan-push-proof.js';
import { UriLocks } from '../../../src/lock/uri-lock.js';
import { silentLog } from '../../../src/runtime/log.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { memoryLockFs } from '../../contract/support/memory-lock-fs.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';

const RUNNING = '/store/ref-updates/running';
const HOST = 'h';
const BOOT = '720ae816-d705-4e9f-8c69-e786ecd42689';
const STALE_MS = 6000;
const NOTHING: ReadonlySet<string> = new Set();
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The git pushes of a node that died on this host, orphaned (init is their parent) and still
 * running: each is proved, and each wait for it to end lasts until the test ends it.
 */
class OrphanedPushes implements ProcessControl {
  readonly waitingFor: number[] = [];
  readonly killed: number[] = [];
  private readonly ended = new Set<number>();
  private readonly endWaits = new Map<number, () => void>();

  isAlive(pid: number): boolean {
    return !this.ended.has(pid) && !this.killed.includes(pid);
  }
  killGroup(pid: number): void {
    this.killed.push(pid);
  }
  waitForExit(pid: number): Promise<void> {
    this.waitingFor.push(pid);
    return new Promise((resolve) => this.endWaits.set(pid, resolve));
  }
  identify(pid: number): RunningProcess {
    return { startTime: 100, argv0: 'git', group: pid, uid: 1001, parent: { pid: 1, argv: ['/sbin/init'], state: 'S' } };
  }
  bootId(): string {
    return BOOT;
  }
  self(): ReturnType<ProcessControl['self']> {
    return { pid: 1000, group: 1000, uid: 1001, runtime: 'node' };
  }
  ownsGroup(): boolean {
    return false;
  }
  /** The push ends by itself, as a network push does once the destination applied it. */
  end(pid: number): void {
    this.ended.add(pid);
    this.endWaits.get(pid)?.();
  }
}

/** An in-memory store with a held lock per push, each in a dead node's name, and a recovering node on the same host. */
function world(pushes: ReadonlyArray<{ lockName: string; pushPid: number }>) {
  const clock = new FakeClock();
  const fs = new MemoryStoreFs(() => clock.now());
  fs.mkdirSync(RUNNING);
  for (const { lockName, pushPid } of pushes) {
    const leaseId = `gone.${pushPid}`;
    fs.mkdirSync(`${RUNNING}/${lockName}`);
    fs.mkdirSync(`${RUNNING}/${lockName}/${leaseId}`);
    const record = { version: 1, nodeId: 'gone', pid: 77, host: HOST, leaseId, counter: 3, uri: `ssh://replica.example.com/${pushPid}.git` };
    const pushed = { acquiredAt: clock.now(), heartbeatAt: clock.now(), pushPid, pushStartTime: 100, bootId: BOOT };
    fs.writeRaw(`${RUNNING}/${lockName}/${leaseId}/owner.json`, JSON.stringify({ ...record, ...pushed }));
  }
  const locks = new UriLocks({ runningDir: RUNNING, nodeId: 'n1', host: HOST, pid: 1000, clock, random: new SeededRandom(1), fs: memoryLockFs(fs) });
  const processes = new OrphanedPushes();
  const recovered: string[] = [];
  const recovery = new LockRecovery({
    locks,
    store: { recoverLockFolder: async () => ({ recovered: 1, removed: true }) },
    clock,
    log: silentLog,
    host: HOST,
    processes,
    lockStaleMs: () => STALE_MS,
    onRecovered: (uriKey) => recovered.push(uriKey),
  });
  return { clock, fs, processes, recovery, recovered };
}

describe('LockRecovery: the orphaned network pushes of a dead node on this host', () => {
  it('are waited for side by side, not one after another, and their locks are taken over once they ended', async () => {
    const [a, b] = ['a'.repeat(40), 'b'.repeat(40)] as const;
    const w = world([
      { lockName: a, pushPid: 4242 },
      { lockName: b, pushPid: 4343 },
    ]);
    await w.recovery.pass(NOTHING); // first sighting
    w.clock.advance(STALE_MS);
    const passing = w.recovery.pass(NOTHING);
    for (let i = 0; i < 20 && w.processes.waitingFor.length < 2; i++) await flush();

    // Both waits run at once: n orphans hold the pass up to lockStale, not n × lockStale.
    expect(w.processes.waitingFor).toEqual([4242, 4343]);
    expect(w.recovered).toEqual([]);
    w.processes.end(4343);
    w.processes.end(4242);
    await passing;

    expect(w.recovered).toEqual([a, b]);
    // Broken by renaming each lock folder to a tombstone of this node's.
    expect(w.fs.readdirSync(RUNNING).map((name) => name.split('.').slice(0, 3).join('.'))).toEqual([`${a}.tomb.n1`, `${b}.tomb.n1`]);
    // Both ended by themselves: nothing left to kill.
    expect(w.processes.killed).toEqual([]);
    expect(w.recovery.takeoverCount).toBe(2);
  });
});
