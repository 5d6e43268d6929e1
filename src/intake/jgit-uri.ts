/**
 * The destination URI as Gerrit's replication plugin writes it into a task file.
 *
 * The plugin stores `URIish.toASCIIString()` (ReplicationTasksStorage, ReplicateRefUpdate.create)
 * and later matches a stored task to its destinations by URIish equality (Destination.matches,
 * DestinationsCollection.getDestinations). So the stored text is not refrelay's expansion of the
 * same URL: spaces and non-ASCII bytes become lower-case `%xx` (UTF-8), the password is dropped,
 * and an https name keeps `+`, `&`, `=` where refrelay writes `%2B`, `%26`, `%3D`.
 *
 * `jgitAsciiString` parses a URL the way JGit's URIish constructor does and prints it the way
 * `toASCIIString` does; two URLs name the same destination for Gerrit exactly when their results
 * are equal. Modelled on eclipse-jgit/jgit, org.eclipse.jgit/src/org/eclipse/jgit/transport/
 * URIish.java: the patterns FULL_URI, SINGLE_SLASH_FILE_URI, RELATIVE_SCP_URI, ABSOLUTE_SCP_URI
 * and LOCAL_FILE (tried in that order), `unescape`, `cleanLeadingSlashes`, `escape` and
 * `format(includePassword = false, escapeNonAscii = true)`.
 */

/** The parts of a URIish that toASCIIString prints (the password never is). */
interface JgitUri {
  readonly scheme?: string | undefined;
  readonly user?: string | undefined;
  readonly host?: string | undefined;
  readonly port: number;
  readonly path?: string | undefined;
}

// The pattern parts of URIish, one for one. Java's possessive `*+`/`?+` only spare backtracking
// there: a run of non-separators followed by separators splits one way only, so the plain
// quantifiers match the same strings.
const SCHEME_P = '([a-z][a-z0-9+-]+)://';
const OPT_USER_PWD_P = '(?:([^/:]+)(?::([^\\\\/]+))?@)?';
const HOST_P = '((?:[^\\\\/:]+)|(?:\\[[0-9a-f:]+\\]))';
const OPT_PORT_P = '(?::(\\d*))?';
const USER_HOME_P = '(?:/~(?:[^\\\\/]+))';
const OPT_DRIVE_LETTER_P = '(?:[A-Za-z]:)?';
const RELATIVE_PATH_P = '(?:(?:[^\\\\/]+[\\\\/]+)*[^\\\\/]*)';
const PATH_P = `(${OPT_DRIVE_LETTER_P}[\\\\/]?${RELATIVE_PATH_P})`;

const FULL_URI = new RegExp(`^${SCHEME_P}(?:${OPT_USER_PWD_P}${HOST_P}${OPT_PORT_P}(${USER_HOME_P}?(?:[\\\\/])|$))?(.+)?$`);
const SINGLE_SLASH_FILE_URI = new RegExp(`^(file):([\\\\/](?![\\\\/])${PATH_P})$`);
const RELATIVE_SCP_URI = new RegExp(`^${OPT_USER_PWD_P}${HOST_P}:((?:${USER_HOME_P}[\\\\/])?${RELATIVE_PATH_P})$`);
const ABSOLUTE_SCP_URI = new RegExp(`^${OPT_USER_PWD_P}([^\\\\/:]{2,}):([\\\\/]${RELATIVE_PATH_P})$`);
const LOCAL_FILE = new RegExp(`^([\\\\/]?${PATH_P})$`);

/** Longer input is no URL Gerrit wrote (its task files hold one URI each); never matched. */
const MAX_URI_CHARS = 4096;

/** Bytes JGit escapes in a user name besides controls, space, `%` and non-ASCII (URIish.reservedChars). */
const RESERVED = new Set(Array.from("!*'();:@&=+$,/?#[]", (char) => char.charCodeAt(0)));

/** `url` as JGit's `new URIish(url).toASCIIString()` prints it; undefined where JGit refuses it. */
export function jgitAsciiString(url: string): string | undefined {
  const parsed = parseUri(url);
  return parsed === undefined ? undefined : formatAscii(parsed);
}

/** What JGit throws on (URISyntaxException, a port beyond int): the whole URI is refused. */
class InvalidUri extends Error {}

/** URIish(String). */
function parseUri(s: string): JgitUri | undefined {
  if (s === '' || s.length > MAX_URI_CHARS) return undefined;
  try {
    return parseValid(s);
  } catch (error) {
    if (error instanceof InvalidUri) return undefined;
    throw error;
  }
}

function parseValid(s: string): JgitUri | undefined {
  let m = SINGLE_SLASH_FILE_URI.exec(s);
  if (m !== null) return { scheme: 'file', port: -1, path: unescape(cleanLeadingSlashes(m[2] ?? '', 'file')) };
  m = FULL_URI.exec(s);
  if (m !== null) return fromFullUri(m);
  // scp-like syntax: user, host and path are taken as written, nothing is unescaped.
  m = RELATIVE_SCP_URI.exec(s) ?? ABSOLUTE_SCP_URI.exec(s);
  if (m !== null) return { user: m[1], host: m[3], port: -1, path: m[4] };
  m = LOCAL_FILE.exec(s);
  if (m !== null) return { port: -1, path: m[1] };
  return undefined;
}

/** The FULL_URI branch of URIish(String); groups: scheme, user, password, host, port, ~user, path. */
function fromFullUri(m: RegExpExecArray): JgitUri {
  const scheme = m[1]!;
  const user = unescapeOptional(m[2]);
  unescapeOptional(m[3]); // never printed, but a bad escape in it refuses the URI all the same
  const portString = m[5];
  if (scheme === 'file' && portString === '') {
    // file://D:/path: a drive letter, not a host with an empty port.
    return { scheme, user, port: -1, path: unescape(cleanLeadingSlashes(`${m[4] ?? ''}:${m[6] ?? ''}${m[7] ?? ''}`, scheme)) };
  }
  let port = -1;
  if (portString !== undefined && portString !== '') {
    port = Number(portString);
    if (port > 2 ** 31 - 1) throw new InvalidUri(); // Integer.parseInt throws
  }
  return { scheme, user, host: unescapeOptional(m[4]), port, path: unescape(cleanLeadingSlashes(`${m[6] ?? ''}${m[7] ?? ''}`, scheme)) };
}

/** URIish.cleanLeadingSlashes: `/C:/x` → `C:/x`, and with a scheme `/~user/x` → `~user/x`. */
function cleanLeadingSlashes(p: string, scheme: string | undefined): string {
  if (p.length >= 3 && p[0] === '/' && p[2] === ':' && /[A-Za-z]/.test(p[1] ?? '')) return p.slice(1);
  if (scheme !== undefined && p.length >= 2 && p[0] === '/' && p[1] === '~') return p.slice(1);
  return p;
}

/**
 * URIish.unescape: `%xx` (either case) becomes that byte, the bytes are read as UTF-8, and bytes
 * that are not UTF-8 as ISO-8859-1 (RawParseUtils.decode). A `%` without two hex digits makes
 * JGit refuse the whole URI.
 */
function unescapeOptional(s: string | undefined): string | undefined {
  return s === undefined ? undefined : unescape(s);
}

function unescape(s: string): string {
  if (!s.includes('%')) return s;
  const bytes = Buffer.from(s, 'utf8');
  const out = Buffer.alloc(bytes.length);
  let j = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c !== 0x25) {
      out[j++] = c;
      continue;
    }
    if (i + 2 >= bytes.length) throw new InvalidUri();
    const high = hexValue(bytes[i + 1]!);
    const low = hexValue(bytes[i + 2]!);
    if (high < 0 || low < 0) throw new InvalidUri();
    out[j++] = (high << 4) | low;
    i += 2;
  }
  const decoded = out.subarray(0, j);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(decoded);
  } catch {
    return decoded.toString('latin1');
  }
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

/**
 * URIish.escape(s, escapeReservedChars, encodeNonAscii = true): every UTF-8 byte ≤ 0x20, > 0x7f
 * or `%` (and the reserved ones, when asked) as `%` and two lower-case hex digits (`%02x`).
 */
function escape(s: string, escapeReserved: boolean): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    if (b <= 32 || b > 127 || b === 0x25 || (escapeReserved && RESERVED.has(b))) out += `%${b.toString(16).padStart(2, '0')}`;
    else out += String.fromCharCode(b);
  }
  return out;
}

/** URIish.format(false, true), i.e. toASCIIString. */
function formatAscii(uri: JgitUri): string {
  let r = '';
  if (uri.scheme !== undefined) r += `${uri.scheme}://`;
  if (uri.user !== undefined) r += escape(uri.user, true);
  if (uri.host !== undefined) {
    if (uri.user !== undefined && uri.user.length > 0) r += '@';
    r += escape(uri.host, false);
    if (uri.scheme !== undefined && uri.port > 0) r += `:${uri.port}`;
  }
  if (uri.path !== undefined) {
    if (uri.scheme !== undefined) {
      if (!uri.path.startsWith('/') && uri.path !== '') r += '/';
    } else if (uri.host !== undefined) {
      r += ':';
    }
    // Only a URI with a scheme is escaped: scp-like and plain paths print as written.
    r += uri.scheme !== undefined ? escape(uri.path, false) : uri.path;
  }
  return r;
}
