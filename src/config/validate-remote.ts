import { allValues, lastValue, type Reporter, type SectionValues } from './collect-sections.js';
import { optional, parseBoolean, parseDurationValue, parseShares, parseWholeNumber, pathRelativeTo, readSetting, type Parsed } from './config-values.js';
import { compileJavaRegex, isJavaRegexProblem } from './java-regex.js';
import { prefixPatternHint, type WholeNamePatternKey } from './prefix-pattern-hint.js';
import { parseConfiguredProjectPattern } from './project-pattern.js';
import { didYouMean } from './did-you-mean.js';
import { defaultPushRefspec, parseRefspec } from './refspec.js';
import { REMOTE_NAME_STYLES, urlHasNameVariable } from './remote-url.js';
import type { JavaRegex, ProjectPattern, RemoteConfig, RemoteNameStyle } from './types.js';

/** Settings of `[replication]` / `[gerrit]` that remotes inherit. */
export interface RemoteDefaults {
  readonly maxRetries: number;
  readonly defaultForceUpdate: boolean;
  /** Relative key files follow the config file. */
  readonly configDir: string;
}

/** Gerrit raises a smaller rescheduleDelay to this floor; so do we, silently, like Gerrit. */
const MIN_RESCHEDULE_DELAY_MS = 3000;

/** A remote's weight in the fair share when `shares` is not set. */
export const DEFAULT_SHARES = 100;

/**
 * Builds one remote, reporting every bad value; the result is only used when nothing was reported.
 * Only push targets get here (`push-targets.ts`): the remote has a url and no fetch refspec.
 */
export function buildRemote(name: string, values: SectionValues, defaults: RemoteDefaults, report: Reporter): RemoteConfig {
  const prefix = `remote.${name}`;
  const setting = <T>(key: string, parse: (text: string) => Parsed<T>, fallback: T): T => readSetting(values, key, `${prefix}.${key}`, parse, fallback, report);

  const projects = parseEach(values, 'projects', prefix, parseConfiguredProjectPattern, report);
  const excludeProjects = parseEach(values, 'excludeProjects', prefix, parseConfiguredProjectPattern, report);
  warnPrefixPatterns('projects', projects, prefix, report);
  warnPrefixPatterns('excludeProjects', excludeProjects, prefix, report);
  const urls = allValues(values, 'url');
  checkUrls(urls, projects, allValues(values, 'projects'), prefix, report);

  const push = parseEach(values, 'push', prefix, parseRefspec, report);
  const rescheduleDelayMs = setting('rescheduleDelay', (t) => parseDurationValue(t, 'seconds'), 3000);
  return {
    name,
    urls,
    push: values.has('push') ? push : [defaultPushRefspec(defaults.defaultForceUpdate)],
    projects,
    excludeProjects,
    threads: setting('threads', (t) => parseWholeNumber(t, 1), 1),
    replicationDelayMs: setting('replicationDelay', (t) => parseDurationValue(t, 'seconds'), 15_000),
    rescheduleDelayMs: Math.max(rescheduleDelayMs, MIN_RESCHEDULE_DELAY_MS),
    replicationRetryMs: setting('replicationRetry', (t) => parseDurationValue(t, 'minutes'), 60_000),
    replicationMaxRetries: setting('replicationMaxRetries', (t) => parseWholeNumber(t, 0), defaults.maxRetries),
    timeoutMs: setting('timeout', (t) => parseDurationValue(t, 'seconds'), 0),
    pushDeadlineMs: setting('pushDeadline', (t) => parseDurationValue(t, 'seconds'), 0),
    mirror: setting('mirror', parseBoolean, false),
    createMissingRepositories: setting('createMissingRepositories', parseBoolean, true),
    excludedRefsPatterns: excludedRefsPatterns(values, prefix, report),
    replicatePermissions: setting('replicatePermissions', parseBoolean, true),
    replicateNoteDbMetaRefs: setting('replicateNoteDbMetaRefs', parseBoolean, true),
    remoteNameStyle: remoteNameStyle(values, prefix, report),
    shares: setting('shares', parseShares, DEFAULT_SHARES),
    ...optional('sshIdentity', setting<string | undefined>('sshIdentity', pathRelativeTo(defaults.configDir), undefined)),
    ...optional('sshCommand', setting<string | undefined>('sshCommand', parseSshCommand, undefined)),
    sshStrictHostKeyChecking: setting('sshStrictHostKeyChecking', parseStrictHostKeyChecking, 'yes'),
  };
}

function parseSshCommand(text: string): Parsed<string> {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, message: 'expected an ssh command, got ""' };
  if (trimmed.startsWith('-')) return { ok: false, message: `expected an ssh program first, got "${text}"` };
  return { ok: true, value: trimmed };
}

function parseStrictHostKeyChecking(text: string): Parsed<'yes' | 'accept-new'> {
  const lower = text.trim().toLowerCase();
  if (lower === 'yes' || lower === 'true') return { ok: true, value: 'yes' };
  if (lower === 'accept-new') return { ok: true, value: 'accept-new' };
  return { ok: false, message: `expected yes or accept-new (host keys are never accepted blindly), got "${text}"` };
}

/**
 * Gerrit's rule: a url without `${name}` would send every project to one
 * repository, so it is only allowed when the remote names exactly one project.
 */
function checkUrls(urls: readonly string[], projects: readonly ProjectPattern[], projectTexts: readonly string[], prefix: string, report: Reporter): void {
  const oneExactProject = projectTexts.length === 1 && projects.length === 1 && projects[0]?.kind === 'exact';
  if (!oneExactProject && urls.some((url) => !urlHasNameVariable(url))) {
    report.problem(`${prefix}.url`, 'url has no ${name} and the remote does not name exactly one project');
  }
}

function parseEach<T>(values: SectionValues, key: string, prefix: string, parse: (text: string) => T | string, report: Reporter): T[] {
  const parsed: T[] = [];
  for (const text of allValues(values, key)) {
    const result = parse(text);
    if (typeof result === 'string') report.problem(`${prefix}.${key}`, result);
    else parsed.push(result);
  }
  return parsed;
}

/**
 * Gerrit logs an invalid excludedRefsPattern and goes on without it, so refrelay ignores it too,
 * with a warning: a config that loaded yesterday must not stop replication today. A valid Java
 * pattern that JavaScript cannot express exactly is refused: it would exclude other refs.
 */
function excludedRefsPatterns(values: SectionValues, prefix: string, report: Reporter): JavaRegex[] {
  const key = `${prefix}.excludedRefsPattern`;
  const patterns: JavaRegex[] = [];
  for (const text of allValues(values, 'excludedRefsPattern')) {
    const regex = compileJavaRegex(text);
    if (!isJavaRegexProblem(regex)) {
      patterns.push(regex);
      warnPrefixPatterns('excludedRefsPattern', [regex], prefix, report);
    } else if (regex.kind === 'invalid')
      report.warning(key, `${regex.message}; ignored, as Gerrit ignores it: the refs it was written to keep back are replicated until the expression is fixed`);
    else report.problem(key, `${regex.message} (Gerrit accepts it; refrelay refuses it rather than exclude other refs than Gerrit would)`);
  }
  return patterns;
}

/**
 * A pattern written as a prefix (`^refs/heads/wip/`) loads, as in Gerrit, and matches nothing:
 * the refs or projects it names are replicated, or the remote replicates no project. It is a
 * warning, not a problem, so a config Gerrit ran with still loads.
 */
function warnPrefixPatterns(key: WholeNamePatternKey, patterns: readonly { readonly text: string }[], prefix: string, report: Reporter): void {
  for (const pattern of patterns) {
    const hint = prefixPatternHint(key, pattern.text);
    if (hint !== undefined) report.warning(`${prefix}.${key}`, hint);
  }
}

/**
 * Gerrit compares the style with `equals`: any other text, `Dash` included, falls back to slash
 * (logged only at FINE level there). refrelay does the same, but says so.
 */
function remoteNameStyle(values: SectionValues, prefix: string, report: Reporter): RemoteNameStyle {
  const text = lastValue(values, 'remoteNameStyle');
  if (text === undefined) return 'slash';
  const style = REMOTE_NAME_STYLES.find((s) => s === text);
  if (style) return style;
  const near = didYouMean(text, REMOTE_NAME_STYLES);
  const hint = near === undefined ? '' : ` (did you mean "${near}"? styles are case-sensitive)`;
  report.warning(
    `${prefix}.remoteNameStyle`,
    `unknown style "${text}"${hint}; Gerrit falls back to slash for it, and so does refrelay: ` +
      'project names keep their "/". Write slash, dash, underscore or basenameOnly',
  );
  return 'slash';
}
