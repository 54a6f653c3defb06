import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, hashKey, issueApiKey, issueTemporaryKey, keyMatches, MAX_KEY_LENGTH, parseKey, TEMP_KEY_PREFIX } from './key-codec.js';

describe('issueApiKey / issueTemporaryKey', () => {
  it('issues prl_ keys whose prefix is their first 12 characters and whose hash is SHA-256 hex', () => {
    const k = issueApiKey();
    expect(k.key.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(k.prefix).toBe(k.key.slice(0, API_KEY_PREFIX.length + 8));
    expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(k.hash).toBe(hashKey(k.key));
    expect(k.key.length).toBeLessThanOrEqual(MAX_KEY_LENGTH);
    expect(parseKey(k.key)).toEqual({ kind: 'api', prefix: k.prefix });
  });

  it('issues temp: keys the same way', () => {
    const k = issueTemporaryKey();
    expect(k.key.startsWith(TEMP_KEY_PREFIX)).toBe(true);
    expect(k.prefix).toBe(k.key.slice(0, TEMP_KEY_PREFIX.length + 8));
    expect(parseKey(k.key)).toEqual({ kind: 'temporary', prefix: k.prefix });
  });

  it('never issues the same key or prefix twice in a run of 200', () => {
    const keys = Array.from({ length: 200 }, () => issueApiKey());
    expect(new Set(keys.map((k) => k.key)).size).toBe(200);
    expect(new Set(keys.map((k) => k.prefix)).size).toBe(200);
  });
});

describe('parseKey', () => {
  it('accepts a key of exactly 256 characters and refuses 257', () => {
    const k256 = API_KEY_PREFIX + 'a'.repeat(256 - API_KEY_PREFIX.length);
    expect(k256).toHaveLength(256);
    expect(parseKey(k256)).toEqual({ kind: 'api', prefix: k256.slice(0, 12) });
    expect(parseKey(`${k256}a`)).toBeNull();
    const t256 = TEMP_KEY_PREFIX + 'a'.repeat(256 - TEMP_KEY_PREFIX.length);
    expect(parseKey(t256)?.kind).toBe('temporary');
    expect(parseKey(`${t256}a`)).toBeNull();
  });

  it('needs at least one character after the 12-character lookup prefix', () => {
    expect(parseKey('prl_12345678')).toBeNull();
    expect(parseKey('prl_123456789')).toEqual({ kind: 'api', prefix: 'prl_12345678' });
    expect(parseKey('temp:12345678')).toBeNull();
    expect(parseKey('temp:123456789')).toEqual({ kind: 'temporary', prefix: 'temp:1234567' + '8' });
  });

  it('refuses keys of another shape', () => {
    for (const k of ['', 'sk_live_123456789abcdef', 'PRL_123456789abc', 'prl123456789abc', 'tmp:123456789abc', 'temp_123456789abc'])
      expect(parseKey(k), k).toBeNull();
  });

  it('refuses whitespace, control and non-ASCII characters anywhere in the key', () => {
    const base = issueApiKey().key;
    for (const bad of [
      `${base} `,
      ` ${base}`,
      `${base.slice(0, 20)} ${base.slice(20)}`,
      `${base}\t`,
      `${base}\n`,
      `${base}\u0000`,
      `${base}é`,
      `${base}\u007f`,
    ])
      expect(parseKey(bad), JSON.stringify(bad)).toBeNull();
    expect(parseKey(base)).not.toBeNull();
  });
});

describe('keyMatches', () => {
  it('matches the key its hash was made from and nothing else', () => {
    const k = issueApiKey();
    expect(keyMatches(k.key, k.hash)).toBe(true);
    expect(keyMatches(`${k.key}x`, k.hash)).toBe(false);
    expect(keyMatches(k.key.slice(0, -1), k.hash)).toBe(false);
    expect(keyMatches(issueApiKey().key, k.hash)).toBe(false);
    // Same lookup prefix, different secret.
    expect(keyMatches(`${k.prefix}${'z'.repeat(k.key.length - k.prefix.length)}`, k.hash)).toBe(false);
  });

  it('returns false (does not throw) for a malformed stored hash', () => {
    const k = issueApiKey();
    expect(keyMatches(k.key, '')).toBe(false);
    expect(keyMatches(k.key, 'abcd')).toBe(false);
    expect(keyMatches(k.key, k.hash.slice(0, 62))).toBe(false);
    expect(keyMatches(k.key, '0'.repeat(64))).toBe(false);
  });
});
