import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeTask, taskKey, uriKey } from '../../../src/task/task.js';
import { waitingTaskEntries } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const builtStore = pathToFileURL(join(repoRoot, 'dist', 'store', 'task-store.js')).href;
const worker = fileURLToPath(new URL('./create-worker.mjs', import.meta.url));

const NODES = 4;
const UPDATES = 1000;
const URIS = ['ssh://replica-one.example.com/platform/core.git', 'https://replica-two.example.com/platform/core.git'];

type Report = { created: number; total: number } | { error: string };

function startNode(root: string, index: number): { child: ChildProcess; ready: Promise<void>; done: Promise<Report> } {
  const nodeId = `node-${index}`;
  const child = fork(worker, [builtStore, root, nodeId, String(index + 1), String(UPDATES), ...URIS], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const done = new Promise<Report>((resolve, reject) => {
    child.on('message', (message: 'ready' | Report) => (message === 'ready' ? markReady() : resolve(message)));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${nodeId} exited with ${code} before reporting`)));
  });
  return { child, ready, done };
}

describe('concurrent create from several processes on one store', () => {
  const tempDir = useTempDirs();

  it(`publishes each of ${UPDATES} updates x ${URIS.length} URIs exactly once when ${NODES} nodes enqueue them at the same moment`, async () => {
    const root = tempDir('refrelay-concurrent');
    const nodes = Array.from({ length: NODES }, (_, i) => startNode(root, i));
    await Promise.all(nodes.map((node) => node.ready));
    const startAt = Date.now() + 300;
    for (const node of nodes) node.child.send({ type: 'go', startAt });
    const reports = await Promise.all(nodes.map((node) => node.done));

    for (const report of reports) expect(report).not.toHaveProperty('error');
    const created = reports.map((report) => ('created' in report ? report.created : 0));
    // Every task was published by exactly one node; all the others saw "already queued".
    expect(created.reduce((sum, n) => sum + n, 0)).toBe(UPDATES * URIS.length);
    // Proof that the nodes really competed, rather than one finishing before the others began.
    expect(created.filter((n) => n > 0).length).toBeGreaterThan(1);

    const waiting = join(root, 'ref-updates', 'waiting');
    // One live-lane folder per URI, nothing else.
    expect(readdirSync(waiting).sort()).toEqual(URIS.map((uri) => uriKey(uri)).sort());
    const entries = waitingTaskEntries(root);
    expect(entries).toHaveLength(UPDATES * URIS.length);
    const perUri = new Map<string, number>();
    for (const entry of entries) {
      const task = decodeTask(readFileSync(join(waiting, entry), 'utf8'));
      expect(entry).toBe(`${uriKey(task.uri)}/${taskKey(task)}.json`);
      perUri.set(task.uri, (perUri.get(task.uri) ?? 0) + 1);
    }
    expect(Object.fromEntries(perUri)).toEqual(Object.fromEntries(URIS.map((uri) => [uri, UPDATES])));
    expect(readdirSync(join(root, 'ref-updates', 'building'))).toEqual([]);
  });
});
