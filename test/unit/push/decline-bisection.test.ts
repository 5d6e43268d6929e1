import { describe, expect, it } from 'vitest';
import { DeclineBisection } from '../../../src/push/decline-bisection.js';
import { parsePushPorcelain, isWholePushDecline } from '../../../src/push/porcelain.js';
import type { PlannedRef } from '../../../src/push/push-plan.js';
import type { RefOutcome } from '../../../src/push/push-types.js';
import { refOutcomes } from '../../../src/push/ref-outcomes.js';
import { splitDeclined, type ChunkAnswer } from '../../../src/push/split-declined.js';
import { captured } from './captured.js';

const refs = (n: number): string[] => Array.from({ length: n }, (_, i) => `refs/heads/b${String(i).padStart(3, '0')}`);

/** Runs the bisection against a pre-receive hook that declines any push holding one of `bad`. */
function isolate(all: readonly string[], bad: ReadonlySet<string>): { refused: string[]; pushes: number; landed: string[] } {
  const bisection = new DeclineBisection(all);
  const landed: string[] = [];
  let pushes = 0;
  for (let probe = bisection.next(); probe !== undefined; probe = bisection.next()) {
    pushes++;
    const declined = probe.some((ref) => bad.has(ref));
    if (!declined) landed.push(...probe);
    bisection.report(declined ? probe : []);
  }
  return { refused: [...bisection.refused()].sort(), pushes, landed: landed.sort() };
}

describe('DeclineBisection: which refs of a push declined as a whole to push again', () => {
  it('finds one refused ref among ten wherever it sits, delivers the nine others, within ceil(log2 n) + 1 pushes', () => {
    const all = refs(10);
    for (const bad of all) {
      const found = isolate(all, new Set([bad]));
      expect(found.refused, bad).toEqual([bad]);
      expect(found.landed, bad).toEqual(all.filter((ref) => ref !== bad));
      expect(found.pushes, bad).toBeLessThanOrEqual(Math.ceil(Math.log2(10)) + 1);
    }
  });

  it('stays within ceil(log2 n) + 1 pushes per refused ref for large pushes and several refused refs', () => {
    const all = refs(1000);
    for (const badCount of [1, 2, 5]) {
      const bad = new Set(all.filter((_, i) => i % Math.floor(1000 / badCount) === 7).slice(0, badCount));
      const found = isolate(all, bad);
      expect(found.refused).toEqual([...bad].sort());
      expect(found.landed).toHaveLength(1000 - badCount);
      expect(found.pushes).toBeLessThanOrEqual(badCount * (Math.ceil(Math.log2(1000)) + 1));
    }
  });

  it('isolates every ref when the hook refuses all of them, and delivers none', () => {
    const all = refs(6);
    const found = isolate(all, new Set(all));
    expect(found.refused).toEqual(all);
    expect(found.landed).toEqual([]);
  });

  it('takes the refs the first half leaves declined as refused without pushing each alone again', () => {
    const bisection = new DeclineBisection(['a', 'b']);
    expect(bisection.next()).toEqual(['a']);
    bisection.report([]);
    expect(bisection.next()).toBeUndefined();
    expect(bisection.refused()).toEqual(['b']);
  });

  it('stops after four pushes per ref against a hook that answers at random, naming the refs it could not settle', () => {
    const bisection = new DeclineBisection(refs(4));
    let pushes = 0;
    for (let probe = bisection.next(); probe !== undefined; probe = bisection.next()) {
      pushes++;
      // Declines every push of two or more refs, accepts single refs only on odd pushes.
      bisection.report(probe.length > 1 || pushes % 2 === 0 ? probe : []);
    }
    expect(pushes).toBeLessThanOrEqual(16);
    expect([...bisection.refused(), ...bisection.unsettled()].length).toBeGreaterThan(0);
  });

  it('refuses to plan a push before the previous one is reported', () => {
    const bisection = new DeclineBisection(['a', 'b']);
    bisection.next();
    expect(() => bisection.next()).toThrow(/not been reported/);
  });
});

describe('a whole-push decline, as git reports it', () => {
  it('is a pre-receive decline of every ref; an update hook declining one ref is not', () => {
    expect(parsePushPorcelain(captured('porcelain-pre-receive-declined').stdout).map(isWholePushDecline)).toEqual([true, true]);
    expect(parsePushPorcelain(captured('porcelain-update-hook-declined-one').stdout).map(isWholePushDecline)).toEqual([false, false]);
    expect(parsePushPorcelain(captured('porcelain-rejected-non-ff-with-landed').stdout).some(isWholePushDecline)).toBe(false);
    expect(parsePushPorcelain(captured('porcelain-remote-lock-failed').stdout).some(isWholePushDecline)).toBe(false);
  });
});

const planned = (dst: string): PlannedRef => ({ ref: dst, dst, refspec: `x:${dst}`, action: 'update' });
const declinedLine = (dst: string): string => `!\tx:${dst}\t[remote rejected] (pre-receive hook declined)`;
const landedLine = (dst: string): string => `*\tx:${dst}\t[new branch]`;

/** What git would print for a push of `dsts` to a destination whose pre-receive refuses `bad`. */
function hookAnswer(dsts: readonly string[], bad: string): ChunkAnswer {
  const declined = dsts.includes(bad);
  const stdout = ['To /dst.git', ...dsts.map((dst) => (declined ? declinedLine(dst) : landedLine(dst))), 'Done', ''].join('\n');
  const { refs, declinedWithPush } = refOutcomes(dsts.map(planned), parsePushPorcelain(stdout));
  return { refs, declinedWithPush };
}

describe('splitDeclined: the refs of a declined push, pushed again in parts', () => {
  it('reports the refs the hook accepts as landed and only the refused one rejected, with git reason', async () => {
    const all = refs(10);
    const bad = all[3]!;
    const pushed: string[][] = [];
    const result = await splitDeclined(hookAnswer(all, bad), async (dsts) => {
      pushed.push([...dsts]);
      return hookAnswer(dsts, bad);
    });
    const byDst = new Map(result.refs.map((ref): [string, RefOutcome] => [ref.dst, ref]));
    expect(result.failure).toBeUndefined();
    expect(byDst.get(bad)).toMatchObject({ status: 'rejected', detail: '[remote rejected] (pre-receive hook declined)' });
    expect(all.filter((dst) => byDst.get(dst)?.status === 'new')).toEqual(all.filter((dst) => dst !== bad));
    expect(pushed.length).toBeLessThanOrEqual(Math.ceil(Math.log2(10)) + 1);
  });

  it('stops at a push that fails as a whole and returns its failure, so the whole push is retried', async () => {
    const all = refs(4);
    const failure = { kind: 'transient' as const, message: 'connection reset', stderrTail: '', retryable: true };
    const result = await splitDeclined(hookAnswer(all, all[0]!), async () => ({ refs: [], declinedWithPush: [], failure }));
    expect(result.failure).toBe(failure);
    expect(result.refs.map((ref) => ref.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected']);
  });
});
