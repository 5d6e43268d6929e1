import { describe, expect, it } from 'vitest';
import { redactText, redactUrl } from '../../../src/runtime/redact.js';

describe('redactUrl: no credential of a destination URL reaches a log, a view or a metric', () => {
  it('keeps the user and hides the password', () => {
    expect(redactUrl('https://bot:s3cret@git.example.com/app.git')).toBe('https://bot:***@git.example.com/app.git');
    expect(redactUrl('https://:token@git.example.com/app.git')).toBe('https://:***@git.example.com/app.git');
  });

  it('hides an http user name with no password: hosts take a token there', () => {
    expect(redactUrl('https://ghp_TOKENVALUE123@github.com/org/app.git')).toBe('https://***@github.com/org/app.git');
    expect(redactUrl('http://TOKEN@git.example.com/app.git')).toBe('http://***@git.example.com/app.git');
  });

  it('keeps an ssh user, which is no secret', () => {
    expect(redactUrl('ssh://gerrit@replica.example.com:29418/app.git')).toBe('ssh://gerrit@replica.example.com:29418/app.git');
    expect(redactUrl('git@github.com:org/app.git')).toBe('git@github.com:org/app.git');
  });

  it('hides the values of an http query, names kept', () => {
    expect(redactUrl('https://git.example.com/app.git?access_token=QTOKEN&x=1')).toBe('https://git.example.com/app.git?access_token=***&x=***');
  });
});

describe('redactText: credentials in URLs inside free text', () => {
  it('hides passwords, http user names and query values, as redactUrl', () => {
    const stderr = "fatal: unable to access 'https://ghp_TOKEN@github.com/org/app.git/': 403; also https://bot:pw@h/x and https://h/y?access_token=Q";
    expect(redactText(stderr)).toBe(
      "fatal: unable to access 'https://***@github.com/org/app.git/': 403; also https://bot:***@h/x and https://h/y?access_token=***",
    );
  });
});
