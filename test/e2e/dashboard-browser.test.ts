import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../src/store/task-store.js';
import { freePort } from '../support/free-port.js';
import { git, initBare, makeWorkTree, refsOf } from '../support/git.js';
import { repoRoot } from '../support/paths.js';
import { RefrelayNode, writeConfig } from '../support/refrelay-node.js';
import { useTempDirs } from '../support/temp-dir.js';

const CHROMIUM = process.env.REFRELAY_CHROMIUM ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  // Visible in the run's output: scripts/test.sh installs chromium where it can.
  console.warn(`NOTICE: ${CHROMIUM} is not installed; the dashboard browser test is skipped`);
}

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

describe.skipIf(!haveChromium)('the dashboard page in a real browser', () => {
  it('shows the queue of a running cluster, and Retry puts a failed task back until it is delivered', async () => {
    const { chromium } = await import('playwright-core');
    const root = tempDir('refrelay-dashboard');
    const storePath = join(root, 'store');
    const repo = initBare(join(root, 'base', 'app.git'));
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', repo, 'main']);
    const httpPort = await freePort();
    const closedPort = await freePort(); // nothing listens: the "down" remote refuses every connection
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${storePath}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 0',
      `  httpListen = 127.0.0.1:${httpPort}`,
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
      '  replicationDelay = 0',
      '  replicationRetry = 200ms',
      '  replicationMaxRetries = 1',
      '  createMissingRepositories = false',
      '[remote "later"]',
      `  url = ${join(root, 'later')}/\${name}.git`,
      '  replicationDelay = 1h',
      '[remote "down"]',
      `  url = git://127.0.0.1:${closedPort}/\${name}.git`,
      '  replicationDelay = 0',
      '  replicationRetry = 1s',
    ]);
    const store = new TaskStore({ root: storePath, nodeId: 'hook' });
    // The DR repository does not exist yet: the push fails twice and the task lands in failed/.
    await store.create({ project: 'app', refs: ['refs/heads/main'], uri: `${join(root, 'dr')}/app.git`, remote: 'dr' });
    await store.create({ project: 'app', refs: ['refs/heads/main'], uri: `${join(root, 'later')}/app.git`, remote: 'later' });
    await store.create({ project: 'app', refs: ['refs/heads/main'], uri: `git://127.0.0.1:${closedPort}/app.git`, remote: 'down' });
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(node);
    await node
      .waitForLog((line) => line.msg.startsWith('task failed'), 20_000)
      .catch((error: unknown) => {
        throw new Error(
          `${String(error)}\n${node
            .logs()
            .map((line) => `${line.msg} ${JSON.stringify(line)}`)
            .join('\n')}`,
        );
      });

    // A fresh profile; the flags keep Chromium from calling out to a network this machine does not have.
    const browser = await chromium.launchPersistentContext(tempDir('refrelay-chromium'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${httpPort}/`);
      await expect.poll(() => page.locator('#remotes tr[data-remote="later"] td.waiting').textContent()).toBe('1');
      const failedRow = page.locator('tr.failed-task');
      await expect.poll(() => failedRow.count()).toBe(1);
      expect(await failedRow.textContent()).toContain('(gave up after 2 attempts)');
      await expect.poll(() => page.locator('#nodes tr.node.alive').count()).toBe(1);
      // Why the "down" URI is not delivered, and when it is tried again.
      const backingOff = page.locator('#backing-off tr.backing-off', { hasText: `git://127.0.0.1:${closedPort}/app.git` });
      await expect
        .poll(
          async () => {
            await page.reload();
            return backingOff.textContent().catch(() => '');
          },
          { timeout: 15_000 },
        )
        .toMatch(/Connection refused|unable to connect/);
      expect(await backingOff.locator('td').nth(2).textContent()).toMatch(/^(due now|in \d)/);
      // And beside the URI in the remotes table.
      expect(
        await page
          .locator('#remotes tr', { hasText: `git://127.0.0.1:${closedPort}/app.git` })
          .locator('span.why')
          .textContent(),
      ).toMatch(/^backing off after attempt \d+, next attempt (due now|in \d+s): .*(Connection refused|unable to connect)/);

      // Someone creates the repository, then asks for the task again from the page.
      initBare(join(root, 'dr', 'app.git'));
      await page.locator('tr.failed-task button.retry').click();
      await expect.poll(() => page.locator('tr.failed-task').count(), { timeout: 15_000 }).toBe(0);
      await expect.poll(() => refsOf(join(root, 'dr', 'app.git')).has('refs/heads/main'), { timeout: 15_000 }).toBe(true);

      // The URI's history opens on a click.
      const history = page.locator('#recent details.uri', { hasText: join(root, 'dr') });
      await expect
        .poll(
          async () => {
            await page.reload();
            return history
              .locator('table.history')
              .textContent()
              .catch(() => '');
          },
          { timeout: 15_000 },
        )
        .toContain('pushed');
      // The delivered push counts in the remote's recent rate although its queue is empty now.
      expect(await page.locator('#remotes tr[data-remote="dr"]').textContent()).toMatch(/0\.[1-9]\/min|[1-9][0-9.]*\/min/);
      // The last hour's charts, drawn from the nodes' trend files: the queue, pushes and failed pushes per remote.
      const series = (chart: string, remote: string) =>
        page
          .locator(`#${chart} g.series[data-remote="${remote}"]`)
          .getAttribute('data-values')
          .then((values) =>
            (values ?? '')
              .split(',')
              .filter((value) => value !== '')
              .map(Number),
          )
          .catch(() => [] as number[]);
      const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
      await expect
        .poll(
          async () => {
            await page.reload();
            return [(await series('chart-waiting', 'later')).at(-1), sum(await series('chart-pushes', 'dr')), sum(await series('chart-failures', 'dr'))];
          },
          { timeout: 15_000 },
        )
        .toEqual([1, 3, 2]);
      expect(sum(await series('chart-failures', 'down'))).toBeGreaterThanOrEqual(1);
      expect(sum(await series('chart-failures', 'later'))).toBe(0);
      for (const chart of ['chart-waiting', 'chart-pushes', 'chart-failures'])
        expect(await page.locator(`#${chart} g.series polyline, #${chart} g.series circle`).count()).toBeGreaterThan(0);
      expect(await page.locator('#chart-legend').textContent()).toBe('down dr later');
      const output = join(repoRoot, '.ci-out');
      mkdirSync(output, { recursive: true });
      await history.locator('summary').click();
      await page.screenshot({ path: join(output, 'dashboard.png'), fullPage: true });
      expect(existsSync(join(output, 'dashboard.png'))).toBe(true);
    } finally {
      await browser.close();
    }
  }, 90_000);

  it('Drop asks first, then moves a failed task out of the page into failed/dropped/, recorded as dropped over http', async () => {
    const { chromium } = await import('playwright-core');
    const root = tempDir('refrelay-dashboard-drop');
    const storePath = join(root, 'store');
    initBare(join(root, 'base', 'app.git'));
    const httpPort = await freePort();
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${storePath}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 200ms',
      `  httpListen = 127.0.0.1:${httpPort}`,
      '[remote "dr"]',
      `  url = ${join(root, 'dr')}/\${name}.git`,
    ]);
    const uri = `${join(root, 'dr')}/app.git`;
    await new TaskStore({ root: storePath, nodeId: 'hook' }).parkFailed(
      { project: 'app', refs: ['refs/heads/blocked'], uri, remote: 'dr' },
      { reason: 'rejected by the destination: [remote rejected] (pre-receive hook declined)', refs: ['refs/heads/blocked'] },
    );
    const node = RefrelayNode.start({ config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg.startsWith('http endpoints listening'));

    const browser = await chromium.launchPersistentContext(tempDir('refrelay-chromium'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${httpPort}/`);
      const failedRow = page.locator('tr.failed-task');
      await expect.poll(() => failedRow.count()).toBe(1);
      expect(await failedRow.textContent()).toContain('pre-receive hook declined');

      // Cancel keeps it.
      const asked: string[] = [];
      page.once('dialog', (dialog) => void (asked.push(dialog.message()), dialog.dismiss()));
      await failedRow.locator('button.drop').click();
      expect(asked).toEqual(['Drop this failed task? It will not be retried; it is kept in failed/dropped/ for replication.retention, then deleted.']);
      await page.reload();
      expect(await page.locator('tr.failed-task').count()).toBe(1);

      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('tr.failed-task button.drop').click();
      await expect.poll(() => page.locator('tr.failed-task').count(), { timeout: 15_000 }).toBe(0);
      expect(await page.locator('#no-failed').textContent()).toBe('none');
    } finally {
      await browser.close();
    }
    const [folder] = readdirSync(join(storePath, 'ref-updates', 'failed', 'dropped'));
    expect(JSON.parse(readFileSync(join(storePath, 'ref-updates', 'failed', 'dropped', folder!, 'dropped.json'), 'utf8'))).toMatchObject({
      version: 1,
      by: 'http client 127.0.0.1',
      via: 'http',
      nodeId: 'node-1',
    });
    expect(node.logs().find((line) => line.msg === 'failed tasks dropped (http)')).toMatchObject({ tasks: 1, from: '127.0.0.1' });
  }, 90_000);
});
