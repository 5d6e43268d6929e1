// `refrelay daemon` processes under chaos: each node keeps one id across incarnations (a restart
// after SIGKILL is the same node coming back), logs every incarnation to its own files, and
// knows which of its exits the chaos loop caused, so any other exit counts as a crash.
import { closeSync, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export class ChaosNode {
  constructor({ processes, cli, id, view, config, logDir }) {
    Object.assign(this, { processes, cli, id, view, config, logDir });
    this.incarnation = 0;
    this.child = undefined;
    this.state = 'down';
    this.busy = false;
    this.startedAt = 0;
    /** Exits nobody asked for: crashes. */
    this.unexpectedExits = [];
    /** Graceful stops that did not exit 0. */
    this.badStops = [];
    this.expectExit = false;
  }

  start() {
    this.incarnation++;
    const stem = join(this.logDir, `${this.id}.${String(this.incarnation).padStart(3, '0')}`);
    const out = openSync(`${stem}.log`, 'a');
    const err = openSync(`${stem}.err`, 'a');
    const child = this.processes.spawn(process.execPath, [this.cli, 'daemon', '--config', this.config, '--node-id', this.id, '--log-level', 'info'], {
      stdio: ['ignore', out, err],
    });
    closeSync(out);
    closeSync(err);
    this.child = child;
    this.state = 'up';
    this.expectExit = false;
    this.startedAt = Date.now();
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (this.child === child) this.state = 'down';
        if (!this.expectExit) this.unexpectedExits.push(`${this.id} incarnation ${this.incarnation} exited on its own (code ${code}, signal ${signal})`);
        resolve({ code, signal });
      });
    });
  }

  get pid() {
    return this.child?.pid;
  }

  get alive() {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  signal(signal) {
    if (!this.alive) return;
    if (signal === 'SIGKILL' || signal === 'SIGTERM') this.expectExit = true;
    process.kill(this.child.pid, signal);
    if (signal === 'SIGSTOP') this.state = 'stopped';
    if (signal === 'SIGCONT') this.state = 'up';
  }

  async kill() {
    if (!this.alive) return;
    const exited = this.exited;
    this.signal('SIGKILL');
    await exited;
  }

  /** SIGTERM and wait: a graceful stop must exit 0 within the grace period (plus a margin). */
  async stop(timeoutMs) {
    if (!this.alive) return;
    if (this.state === 'stopped') this.signal('SIGCONT');
    const exited = this.exited;
    this.signal('SIGTERM');
    const timer = setTimeout(() => {
      this.badStops.push(`${this.id} incarnation ${this.incarnation} did not stop within ${timeoutMs} ms of SIGTERM: killed`);
      this.signal('SIGKILL');
    }, timeoutMs);
    const { code, signal } = await exited;
    clearTimeout(timer);
    if (code !== 0 && signal !== 'SIGKILL') this.badStops.push(`${this.id} incarnation ${this.incarnation} stopped with code ${code}, signal ${signal}`);
  }

  /** Every incarnation's JSON log lines, each with the incarnation it came from. */
  logLines() {
    const lines = [];
    for (const name of readdirSync(this.logDir)
      .filter((file) => file.startsWith(`${this.id}.`) && file.endsWith('.log'))
      .sort()) {
      const incarnation = Number(name.slice(this.id.length + 1, -'.log'.length));
      for (const line of readFileSync(join(this.logDir, name), 'utf8').split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          lines.push({ ...JSON.parse(line), incarnation });
        } catch {
          // the last line of a SIGKILLed incarnation may be cut
        }
      }
    }
    return lines;
  }

  /** Everything written to stderr, per incarnation (a clean node writes nothing there). */
  stderrTexts() {
    const texts = [];
    for (const name of readdirSync(this.logDir)
      .filter((file) => file.startsWith(`${this.id}.`) && file.endsWith('.err'))
      .sort()) {
      const path = join(this.logDir, name);
      const text = existsSync(path) ? readFileSync(path, 'utf8').trim() : '';
      if (text !== '') texts.push({ file: name, text });
    }
    return texts;
  }
}
