import type { ReplicationConfig } from '../config/types.js';
import type { WaitingListing } from '../store/task-store.js';
import { waitingFolderName } from '../store/store-paths.js';
import { groupByUri, type ResolutionCache, type UntrustedFolder, type UriGroup } from './uri-groups.js';

/**
 * The waiting work by URI, kept between passes: a pass regroups only the URIs whose folders the
 * listing says changed, so its cost follows what changed, not the backlog (DESIGN.md "Scheduling").
 * A new config regroups everything: it may resolve every task to another remote, or refuse it.
 */
export class WaitingGroups {
  private readonly byUri = new Map<string, UriGroup>();
  private readonly untrustedByUri = new Map<string, UntrustedFolder[]>();
  private config: ReplicationConfig | undefined;
  /** Each folder's remote, or why it is refused; per config, as the folder objects stay the same until relearned. */
  private resolutions: ResolutionCache = new WeakMap();

  get groups(): ReadonlyMap<string, UriGroup> {
    return this.byUri;
  }

  /** Folders whose task no node may push (usually none). */
  untrusted(): UntrustedFolder[] {
    return this.untrustedByUri.size === 0 ? [] : [...this.untrustedByUri.values()].flat();
  }

  /** Takes in a listing; returns the URIs whose group appeared, changed or went. */
  update(config: ReplicationConfig, listing: WaitingListing): Iterable<string> {
    if (config !== this.config) return this.regroupAll(config, listing);
    for (const key of listing.changed) this.regroup(key, listing);
    return listing.changed;
  }

  private regroupAll(config: ReplicationConfig, listing: WaitingListing): Set<string> {
    const changed = new Set([...this.byUri.keys(), ...this.untrustedByUri.keys()]);
    this.config = config;
    this.resolutions = new WeakMap();
    this.byUri.clear();
    this.untrustedByUri.clear();
    const untrusted: UntrustedFolder[] = [];
    for (const [key, group] of groupByUri(config, listing.folders, this.resolutions, untrusted)) {
      this.byUri.set(key, group);
      changed.add(key);
    }
    for (const refused of untrusted) {
      this.untrustedByUri.set(refused.folder.uriKey, [...(this.untrustedByUri.get(refused.folder.uriKey) ?? []), refused]);
      changed.add(refused.folder.uriKey);
    }
    return changed;
  }

  private regroup(key: string, listing: WaitingListing): void {
    const folders = [listing.folder(waitingFolderName(key, 'live')), listing.folder(waitingFolderName(key, 'bulk'))].filter((folder) => folder !== undefined);
    const untrusted: UntrustedFolder[] = [];
    const group = groupByUri(this.config!, folders, this.resolutions, untrusted).get(key);
    if (group === undefined) this.byUri.delete(key);
    else this.byUri.set(key, group);
    if (untrusted.length === 0) this.untrustedByUri.delete(key);
    else this.untrustedByUri.set(key, untrusted);
  }
}
