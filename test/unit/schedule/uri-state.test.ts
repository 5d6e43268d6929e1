import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF_CAP_MS } from '../../../src/schedule/backoff.js';
import { capNotBefore, parseUriState } from '../../../src/schedule/uri-state.js';

const now = Date.UTC(2026, 0, 1);
const written = { uri: 'git://host/app.git', attempts: 2, lastError: 'connection refused', notBefore: now + 4_000, updatedAt: now, nodeId: 'node-a' };

describe('parseUriState', () => {
  it('reads a state file as a node writes it', () => {
    expect(parseUriState(written)).toEqual(written);
  });

  it('treats a notBefore that is not a finite number as no state', () => {
    for (const notBefore of [Number.POSITIVE_INFINITY, Number.NaN, '1e400', null, undefined]) {
      expect(parseUriState({ ...written, notBefore }), String(notBefore)).toBeUndefined();
    }
  });

  it('treats an attempt count that is negative, fractional, unsafe or not a number as no state', () => {
    for (const attempts of [-1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, '3']) {
      expect(parseUriState({ ...written, attempts }), String(attempts)).toBeUndefined();
    }
    expect(parseUriState({ ...written, attempts: 0 })?.attempts).toBe(0);
  });

  it('fills optional fields that are missing or of the wrong type instead of refusing the state', () => {
    expect(parseUriState({ attempts: 1, notBefore: now, uri: 7, updatedAt: Number.NaN })).toEqual({
      uri: '',
      attempts: 1,
      lastError: '',
      notBefore: now,
      updatedAt: 0,
      nodeId: '',
    });
  });

  it('is undefined for anything but an object', () => {
    for (const value of [null, undefined, 3, 'x', true]) expect(parseUriState(value)).toBeUndefined();
  });
});

describe('capNotBefore', () => {
  const state = parseUriState(written)!;

  it('leaves a notBefore within now + cap as it is (the same object)', () => {
    expect(capNotBefore(state, now, DEFAULT_BACKOFF_CAP_MS)).toBe(state);
    const atCap = { ...state, notBefore: now + DEFAULT_BACKOFF_CAP_MS };
    expect(capNotBefore(atCap, now, DEFAULT_BACKOFF_CAP_MS)).toBe(atCap);
  });

  it('counts a notBefore three thousand years ahead as now + cap of the reading clock, keeping the rest', () => {
    const far = { ...state, notBefore: now + 3000 * 365.25 * 24 * 3600 * 1000 };
    expect(capNotBefore(far, now, DEFAULT_BACKOFF_CAP_MS)).toEqual({ ...state, notBefore: now + DEFAULT_BACKOFF_CAP_MS });
    expect(capNotBefore(far, now + 60_000, DEFAULT_BACKOFF_CAP_MS).notBefore).toBe(now + 60_000 + DEFAULT_BACKOFF_CAP_MS);
  });

  it('leaves a notBefore in the past alone', () => {
    const past = { ...state, notBefore: now - 1 };
    expect(capNotBefore(past, now, DEFAULT_BACKOFF_CAP_MS)).toBe(past);
  });
});
