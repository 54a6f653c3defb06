// API key strings. A key is "<kind prefix><random>"; the first characters (key_prefix) find the row and the
// SHA-256 of the whole key is compared in constant time. Keys carry 256 bits of randomness, so a fast
// hash is the right tool (a password KDF would only slow down every request).
import { createHash, timingSafeEqual } from 'node:crypto';
import { randomToken } from '../../lib/ids.js';

export const API_KEY_PREFIX = 'prl_';
export const TEMP_KEY_PREFIX = 'temp:';
export const MAX_KEY_LENGTH = 256;
const API_PREFIX_LEN = API_KEY_PREFIX.length + 8;
const TEMP_PREFIX_LEN = TEMP_KEY_PREFIX.length + 8;

export interface IssuedKey {
  key: string;
  prefix: string;
  hash: string;
}

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function issueApiKey(): IssuedKey {
  const key = API_KEY_PREFIX + randomToken(32);
  return { key, prefix: key.slice(0, API_PREFIX_LEN), hash: hashKey(key) };
}

export function issueTemporaryKey(): IssuedKey {
  const key = TEMP_KEY_PREFIX + randomToken(32);
  return { key, prefix: key.slice(0, TEMP_PREFIX_LEN), hash: hashKey(key) };
}

export type KeyShape = { kind: 'api' | 'temporary'; prefix: string } | null;

/** Classify a presented key by shape; null when it cannot be one of ours. */
export function parseKey(key: string): KeyShape {
  if (key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) return null;
  if (key.startsWith(API_KEY_PREFIX) && key.length > API_PREFIX_LEN) return { kind: 'api', prefix: key.slice(0, API_PREFIX_LEN) };
  if (key.startsWith(TEMP_KEY_PREFIX) && key.length > TEMP_PREFIX_LEN) return { kind: 'temporary', prefix: key.slice(0, TEMP_PREFIX_LEN) };
  return null;
}

export function keyMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashKey(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
