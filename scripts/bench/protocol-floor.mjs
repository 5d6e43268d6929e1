// The store protocol's floor: what a Node program pays to replicate through DESIGN.md's store on
// this machine, with none of refrelay's decisions. Per URI it does only the file operations the
// protocol prescribes — lock folder (mkdir), the claim (the URI's waiting folder renamed in as
// the lease folder, checked with an lstat), owner record (temp, rename), the lease folder listed
// and each task read, the owner record again with the push's pid, then the lease
// folder renamed out of running/ and the lock folder removed — around the same consolidated `git push`
// (object ids read from the loose refs, output collected). No scheduling, fair share, retry state,
// logs or metrics. The file operations run on a worker thread, each step's in one message, as
// cheaply as Node can have them without stalling its event loop on a slow network filesystem.
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { gitEnv, pool } from './cluster-util.mjs';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { join } = require('node:path');
const writeRecord = (lease, record) => {
  fs.writeFileSync(join(lease, 'owner.json.tmp'), record, { flag: 'wx' });
  fs.renameSync(join(lease, 'owner.json.tmp'), join(lease, 'owner.json'));
};
const steps = {
  lockAndClaim: ({ lock, lease, record, folder }) => {
    fs.mkdirSync(lock);
    fs.renameSync(folder, lease);
    fs.lstatSync(lease);
    writeRecord(lease, record);
    for (const name of fs.readdirSync(lease)) {
      if (name.endsWith('.json') && name !== 'owner.json') JSON.parse(fs.readFileSync(join(lease, name), 'utf8'));
    }
  },
  record: ({ lease, record }) => writeRecord(lease, record),
  retire: ({ lock, lease, to }) => {
    fs.readdirSync(lease);
    fs.renameSync(lease, to);
    fs.rmdirSync(lock);
  },
};
parentPort.on('message', ({ id, step, args }) => {
  try {
    steps[step](args);
    parentPort.postMessage({ id });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error) });
  }
});
`;

/** Lays out `storeRoot` with one task file per ref update in its URI's folder; returns the jobs for `runProtocolFloor`. */
export function prepareProtocolFloor(storeRoot, pushes) {
  rmSync(storeRoot, { recursive: true, force: true });
  for (const dir of ['waiting', 'running', 'done']) mkdirSync(join(storeRoot, dir), { recursive: true });
  let next = 0;
  return pushes.map(({ repo, url, refs }, index) => ({
    repo,
    url,
    refs,
    key: `uri-${index}`,
    folder: writeTasks(
      join(storeRoot, 'waiting', `uri-${index}`),
      refs.map((ref) => ({ name: `task-${next++}.json`, ref, url })),
    ),
  }));
}

function writeTasks(folder, tasks) {
  mkdirSync(folder);
  for (const { name, ref, url } of tasks) writeFileSync(join(folder, name), JSON.stringify({ ref, url }));
  return folder;
}

/** A worker for the floor's file operations; `close()` ends it. */
export function startProtocolFloorWorker() {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  const pending = new Map();
  let gone;
  let nextId = 0;
  const failAll = (error) => {
    gone ??= error;
    for (const { reject } of pending.values()) reject(gone);
    pending.clear();
  };
  worker.on('message', ({ id, error }) => {
    const call = pending.get(id);
    if (call === undefined) return;
    pending.delete(id);
    if (error === undefined) call.resolve();
    else call.reject(new Error(error));
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the protocol floor's worker exited (${code})`)));
  return {
    run: (step, args) =>
      new Promise((resolve, reject) => {
        if (gone !== undefined) return reject(gone);
        const id = nextId++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, step, args });
      }),
    close: () => worker.terminate(),
  };
}

export function runProtocolFloor(worker, storeRoot, jobs, parallel) {
  return pool(jobs, parallel, async ({ repo, url, refs, key, folder }) => {
    const lock = join(storeRoot, 'running', key);
    const lease = join(lock, 'lease');
    await worker.run('lockAndClaim', { lock, lease, record: JSON.stringify({ node: 'floor', at: Date.now() }), folder });
    const refspecs = refs.map((ref) => `${readLooseRef(repo, ref)}:${ref}`);
    const pushed = push(repo, ['--porcelain', '--', url, ...refspecs]);
    await Promise.all([worker.run('record', { lease, record: JSON.stringify({ node: 'floor', at: Date.now(), pushPid: pushed.pid }) }), pushed.done]);
    await worker.run('retire', { lock, lease, to: join(storeRoot, 'done', key) });
  });
}

const refBuffer = Buffer.alloc(128);

function readLooseRef(repo, ref) {
  const fd = openSync(join(repo, ref), 'r');
  try {
    return refBuffer.toString('latin1', 0, readSync(fd, refBuffer, 0, refBuffer.length, 0)).trim();
  } finally {
    closeSync(fd);
  }
}

function push(cwd, args) {
  const child = spawn('git', ['push', ...args], { cwd, env: gitEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`git push ${args.join(' ')}: ${stderr}`))));
  });
  return { pid: child.pid, done };
}
