import { join } from 'node:path';
import { asJsonObject } from '../runtime/json-object.js';
import type { StoreContext } from './store-context.js';
import { lstatTolerant } from './store-listing.js';
import { OWNER_RECORD_NAME, parseWaitingFolderName } from './store-paths.js';
import { readJsonTolerant } from './task-reader.js';

/** A lease id that can name a folder: one path component, as the lock component makes them. */
const LEASE_ID_PATTERN = /^[A-Za-z0-9_.-]{1,255}$/;

/**
 * Whether `waiting/<folder>`, as this client resolves the path, is a folder a claim took away: a
 * lease folder under running/ or one retired to done/ (DESIGN.md "Waiting folders", Stale lookups).
 * A waiting folder never holds an owner record, but a network filesystem's client that looked the
 * folder up before another machine's claim renamed it goes on resolving the name to that folder
 * for as long as it trusts its cache: a link or rename through the name lands among claimed tasks,
 * and EEXIST there says nothing about what waits. An owner record counts only when the lease it
 * names is really held or retired, so a file left there by a person cannot turn the URI's updates
 * away; the record is untrusted and only its lease id is used, to look for two fixed paths.
 */
export async function seenAsClaimed(ctx: StoreContext, folder: string): Promise<boolean> {
  const parsed = parseWaitingFolderName(folder);
  if (parsed === undefined) return false;
  const record = asJsonObject(await readJsonTolerant(ctx.fs, join(ctx.paths.waitingFolder(folder), OWNER_RECORD_NAME), 'check waiting folder'));
  const leaseId = record?.leaseId;
  if (typeof leaseId !== 'string' || !LEASE_ID_PATTERN.test(leaseId) || leaseId === '.' || leaseId === '..') return false;
  for (const place of [ctx.paths.lockFolder(`${parsed.uriKey}/${leaseId}`), ctx.paths.doneFolder(parsed.uriKey, leaseId)]) {
    if ((await lstatTolerant(ctx, place, 'check waiting folder'))?.isDirectory() === true) return true;
  }
  return false;
}
