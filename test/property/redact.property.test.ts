import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactText, redactUrl } from '../../src/runtime/redact.js';

/**
 * RFC 3986: userinfo = *( unreserved / pct-encoded / sub-delims / ":" ), and
 * the first ":" ends the user name. Everything else is percent-encoded (as
 * UTF-8 bytes), which is how git, curl and URL builders write it.
 */
const USERINFO_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=]/;

function encodeUserinfoPart(raw: string, colonAllowed: boolean): string {
  let out = '';
  for (const char of raw) {
    if (USERINFO_SAFE.test(char) || (colonAllowed && char === ':')) out += char;
    else for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Characters that stress a redactor: URL delimiters, quotes, "%", unicode spaces, emoji, lone surrogates. */
const awkward = fc.constantFrom(
  ':',
  '@',
  '/',
  '?',
  '#',
  '[',
  ']',
  '%',
  '%40',
  ' ',
  '\t',
  '\u00a0',
  '\u2028',
  '\u3000',
  '"',
  "'",
  '\\',
  '*',
  '***',
  '$&',
  '$1',
  'é',
  'ß',
  '日本',
  '😀',
  '\ud800',
  '\0',
  '\n',
  '=',
  '&',
  '+',
  ';',
  '!',
  '~',
);

const secretText = (minLength: number): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 4 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }), awkward), {
      minLength: 1,
      maxLength: 8,
    })
    .map((parts) => parts.join(''))
    .filter((text) => [...text].length >= minLength);

const scheme = fc.constantFrom('https', 'http', 'ssh', 'git', 'HTTPS', 'git+ssh');
const host = fc.constantFrom('example.com', 'git.example.com', '10.0.0.7', '[::1]', '[2001:db8::1]', 'gerrit-1.internal', 'h');
const port = fc.constantFrom('', ':443', ':8080', ':29418', ':22');
/** A path (maybe empty); query and fragment only after a path, as git URLs have them. */
const path = fc.constantFrom('', '/', '/x.git', '/team/app.git', '/a/b/c', '/p.git?x=1', '/p?a=b@c&d=e:f', '/p.git#frag@x', '/~user/x.git');

interface Credential {
  readonly user: string;
  readonly password: string;
  /** The URL as it appears in the text. */
  readonly url: string;
  /** The same URL with the password replaced by `***`: what redaction must produce. */
  readonly redacted: string;
  /** The password as it appears in the URL. */
  readonly embedded: string;
}

const credentialUrl: fc.Arbitrary<Credential> = fc
  .record({ scheme, user: secretText(1), password: secretText(4), host, port, path })
  .map(({ scheme: s, user, password, host: h, port: p, path: rest }) => {
    const encodedUser = encodeUserinfoPart(user, false);
    const embedded = encodeUserinfoPart(password, true);
    return { user, password, url: `${s}://${encodedUser}:${embedded}@${h}${p}${rest}`, redacted: `${s}://${encodedUser}:***@${h}${p}${rest}`, embedded };
  });

/** Free text with no URL in it: "://" never appears, so nothing in it looks like a credential. */
const noise = fc
  .array(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 4 }), awkward), { maxLength: 5 })
  .map((parts) => parts.join(''))
  .filter((text) => !text.includes('://'));

const separator = fc.constantFrom('', ' ', '\n', "'", '"', '\t', '(', '<', ' at ');

/** Lines shaped like git's stderr and refrelay's JSON logs around one URL. */
const lineAround = fc.constantFrom(
  (url: string) => `fatal: unable to access '${url}/': The requested URL returned error: 403`,
  (url: string) => `remote: Invalid username or password.\nfatal: Authentication failed for '${url}'`,
  (url: string) => `To ${url}\n ! [remote rejected] main -> main (pre-receive hook declined)`,
  (url: string) => `error: failed to push some refs to '${url}'`,
  (url: string) => `ssh: Could not resolve hostname: ${url}: Name or service not known`,
  (url: string) => `{"level":50,"uri":${JSON.stringify(url)},"msg":"push failed"}`,
  (url: string) => url,
);

/** A text holding one to three credential URLs between noise, built twice: as written and as redaction must leave it. */
const textWithCredentials = fc
  .tuple(fc.array(fc.tuple(noise, separator, lineAround, credentialUrl, separator), { minLength: 1, maxLength: 3 }), noise, fc.boolean())
  .map(([parts, tail, asJsonString]) => {
    let text = '';
    let expected = '';
    for (const [before, open, line, credential, close] of parts) {
      text += `${before}${open}${line(credential.url)}${close}`;
      expected += `${before}${open}${line(credential.redacted)}${close}`;
    }
    text += tail;
    expected += tail;
    // A log line may carry git's stderr as a JSON string.
    return asJsonString
      ? { text: JSON.stringify(text), expected: JSON.stringify(expected), credentials: parts.map((p) => p[3]) }
      : { text, expected, credentials: parts.map((p) => p[3]) };
  });

function secretsIn(credential: Credential): string[] {
  return [credential.embedded, credential.password].filter((secret) => [...secret].length >= 4);
}

describe('redactUrl', () => {
  it('never returns the password of a URL with credentials, for https, http, ssh and git URLs', () => {
    fc.assert(
      fc.property(credentialUrl, (credential) => {
        const out = redactUrl(credential.url);
        for (const secret of secretsIn(credential)) {
          fc.pre(!credential.redacted.includes(secret));
          expect(out).not.toContain(secret);
        }
      }),
      { seed: 5001, numRuns: 2000 },
    );
  });

  it('replaces exactly the password with *** and keeps the user, host and path', () => {
    fc.assert(
      fc.property(credentialUrl, (credential) => {
        expect(redactUrl(credential.url)).toBe(credential.redacted);
      }),
      { seed: 5002, numRuns: 2000 },
    );
  });
});

describe('redactText', () => {
  it('never leaves a password in git stderr-like text or JSON holding credential URLs', () => {
    fc.assert(
      fc.property(textWithCredentials, ({ text, expected, credentials }) => {
        const out = redactText(text);
        for (const secret of credentials.flatMap(secretsIn)) {
          fc.pre(!expected.includes(secret));
          expect(out).not.toContain(secret);
        }
      }),
      { seed: 5003, numRuns: 2000 },
    );
  });

  it('changes nothing but the passwords', () => {
    fc.assert(
      fc.property(textWithCredentials, ({ text, expected }) => {
        expect(redactText(text)).toBe(expected);
      }),
      { seed: 5004, numRuns: 2000 },
    );
  });
});

/** URLs without a password: none, or a user name only, and scp-like addresses. */
const urlWithoutPassword = fc
  .record({ scheme, user: fc.option(secretText(1), { nil: undefined }), host, port, path })
  .map(({ scheme: s, user, host: h, port: p, path: rest }) => `${s}://${user === undefined ? '' : `${encodeUserinfoPart(user, false)}@`}${h}${p}${rest}`);
const scpLike = fc.constantFrom('git@example.com:team/app.git', 'example.com:x.git', 'user@[::1]:x', 'a:b@c');

describe('texts without credentials', () => {
  it('come out of redactText unchanged', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(noise, separator, lineAround, fc.oneof(urlWithoutPassword, scpLike), separator), { maxLength: 3 }),
        noise,
        (parts, tail) => {
          const text = parts.map(([before, open, line, url, close]) => `${before}${open}${line(url)}${close}`).join('') + tail;
          expect(redactText(text)).toBe(text);
        },
      ),
      { seed: 5005, numRuns: 2000 },
    );
  });

  it('come out of redactUrl unchanged', () => {
    fc.assert(
      fc.property(fc.oneof(urlWithoutPassword, scpLike, noise), (url) => {
        expect(redactUrl(url)).toBe(url);
      }),
      { seed: 5006, numRuns: 2000 },
    );
  });
});

describe('an empty user name (RFC 3986 allows `https://:token@host`)', () => {
  const tokenUrl = fc.record({ scheme, password: secretText(4), host, port, path }).map(({ scheme: s, password, host: h, port: p, path: rest }) => {
    const embedded = encodeUserinfoPart(password, true);
    return { password, embedded, url: `${s}://:${embedded}@${h}${p}${rest}`, redacted: `${s}://:***@${h}${p}${rest}` };
  });

  it('redacts the password in text exactly as redactUrl does', () => {
    fc.assert(
      fc.property(tokenUrl, lineAround, ({ url, redacted }, line) => {
        expect(redactUrl(url)).toBe(redacted);
        expect(redactText(line(url))).toBe(line(redacted));
      }),
      { seed: 5007, numRuns: 500 },
    );
  });

  it('redacts a token after an empty user name in git stderr (regression)', () => {
    expect(redactText("fatal: unable to access 'https://:s3cr3t-token@git.example.com/x.git/': 403")).toBe(
      "fatal: unable to access 'https://:***@git.example.com/x.git/': 403",
    );
  });
});
