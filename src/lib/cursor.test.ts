import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../wire/api-error.js';
import { CursorCodec, toPage } from './cursor.js';

const secret = randomBytes(32);
const codec = new CursorCodec(secret);

/** Sign an arbitrary payload with the codec's secret (to reach the checks behind the MAC). */
function forge(payloadJson: string, key = secret): string {
  const payload = Buffer.from(payloadJson).toString('base64url');
  const mac = createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url');
  return `${payload}.${mac}`;
}

function decodeError(cursor: string, list = 'files:p1'): ApiError {
  try {
    codec.decode(cursor, list);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error(`cursor ${JSON.stringify(cursor)} decoded without error`);
}

function expectInvalidCursor(cursor: string, list = 'files:p1'): void {
  const err = decodeError(cursor, list);
  expect(err.type).toBe('invalid_cursor');
  expect(err.status).toBe(400);
}

/** Replace the character at i with a different base64url character. */
function flip(s: string, i: number): string {
  const c = s[i]!;
  return s.slice(0, i) + (c === 'A' ? 'B' : 'A') + s.slice(i + 1);
}

describe('CursorCodec', () => {
  it('positionOf: no cursor and an empty one both mean the first page; anything else must decode', () => {
    expect(codec.positionOf(undefined, 'files:p1')).toBeUndefined();
    expect(codec.positionOf('', 'files:p1')).toBeUndefined();
    const cursor = codec.encode({ list: 'files:p1', key: ['a', 'b'] });
    expect(codec.positionOf(cursor, 'files:p1')).toEqual({ list: 'files:p1', key: ['a', 'b'] });
    for (const bad of [' ', '.', 'garbage', ['x'], 42]) expect(() => codec.positionOf(bad, 'files:p1')).toThrow(ApiError);
  });

  it('round-trips the list name and sort key', () => {
    const key = ['2025-01-01T00:00:00.000Z', '5a3c0c8e-1111-4222-8333-444455556666', 42];
    const cursor = codec.encode({ list: 'files:p1', key });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(codec.decode(cursor, 'files:p1')).toEqual({ list: 'files:p1', key });
  });

  it('is opaque-but-stable: the same position gives the same cursor, another position another', () => {
    const a = codec.encode({ list: 'l', key: ['x', '1'] });
    expect(codec.encode({ list: 'l', key: ['x', '1'] })).toBe(a);
    expect(codec.encode({ list: 'l', key: ['x', '2'] })).not.toBe(a);
  });

  it('refuses a cursor with any single character changed, in the payload or in the MAC', () => {
    const cursor = codec.encode({ list: 'files:p1', key: ['2025-01-01T00:00:00.000Z', 'abc'] });
    const dot = cursor.indexOf('.');
    for (const i of [0, Math.floor(dot / 2), dot - 1, dot + 1, cursor.length - 2]) expectInvalidCursor(flip(cursor, i));
  });

  it('accepts only the exact MAC text: no padding, no trailing characters, no alias of the last character', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const cursor = codec.encode({ list: 'files:p1', key: ['a', 'b'] });
    // The MAC's last base64url character carries 2 data bits; its 4 low bits are padding. A character
    // differing only there decodes to the same bytes, yet the cursor text was altered.
    const last = alphabet.indexOf(cursor.at(-1)!);
    const alias = cursor.slice(0, -1) + alphabet[last ^ 1];
    expect(Buffer.from(alias.split('.')[1]!, 'base64url')).toEqual(Buffer.from(cursor.split('.')[1]!, 'base64url'));
    expectInvalidCursor(alias);
    for (const suffix of ['=', '==', '!', ' ', '.', 'A']) expectInvalidCursor(cursor + suffix);
    expect(() => codec.decode(cursor, 'files:p1')).not.toThrow();
  });

  it('refuses a cursor for another list (e.g. another project)', () => {
    const cursor = codec.encode({ list: 'files:p1', key: ['a', 'b'] });
    expect(() => codec.decode(cursor, 'files:p1')).not.toThrow();
    expectInvalidCursor(cursor, 'files:p2');
    expectInvalidCursor(cursor, 'transcriptions:p1');
  });

  it('refuses a cursor signed with another secret (another installation)', () => {
    const other = new CursorCodec(randomBytes(32)).encode({ list: 'files:p1', key: ['a', 'b'] });
    expectInvalidCursor(other);
  });

  it('refuses garbage: empty, no dot, leading dot, only a dot, non-base64, over 2048 chars', () => {
    for (const c of ['', 'abc', '.abc', '.', 'abc.', '!!!.???', 'null', 'a'.repeat(3000), `${'a'.repeat(2040)}.${'b'.repeat(22)}`]) expectInvalidCursor(c);
  });

  it('refuses a validly signed cursor over 2048 characters, accepts the longest one within 2048', () => {
    let within = '';
    let over = '';
    for (let pad = 1400; pad < 1700 && !over; pad++) {
      const c = codec.encode({ list: 'L', key: ['x'.repeat(pad)] });
      if (c.length <= 2048) within = c;
      else over = c;
    }
    expect(within.length).toBeGreaterThan(2040);
    expect(over.length).toBeGreaterThan(2048);
    expect(codec.decode(within, 'L').list).toBe('L');
    expectInvalidCursor(over, 'L');
  });

  it('refuses a correctly signed payload that is not valid JSON or has the wrong shape', () => {
    expectInvalidCursor(forge('{not json'));
    expectInvalidCursor(forge('{"list":"files:p1"}'));
    expectInvalidCursor(forge('["files:p1","not-an-array"]'));
    expectInvalidCursor(forge('["files:p1"]'));
    // The same signed shape the codec emits is accepted: the checks above fail for their stated reason.
    expect(codec.decode(forge('["files:p1",["a","b"]]'), 'files:p1').key).toEqual(['a', 'b']);
  });

  it('gives a message that tells the client to copy next_page_cursor unchanged', () => {
    expect(decodeError('garbage').message).toMatch(/next_page_cursor/);
  });
});

describe('toPage', () => {
  const rows = [{ k: 'a' }, { k: 'b' }, { k: 'c' }];
  const keyOf = (r: { k: string }) => [r.k];

  it('returns limit items and a cursor after the last item when more rows exist', () => {
    const page = toPage(rows, 2, codec, 'L', keyOf);
    expect(page.items).toEqual([{ k: 'a' }, { k: 'b' }]);
    expect(page.next_page_cursor).not.toBeNull();
    expect(codec.decode(page.next_page_cursor!, 'L').key).toEqual(['b']);
  });

  it('returns next_page_cursor null (present, not undefined) on the last page', () => {
    const exact = toPage(rows, 3, codec, 'L', keyOf);
    expect(exact.items).toHaveLength(3);
    expect(exact).toHaveProperty('next_page_cursor', null);
    const empty = toPage([], 5, codec, 'L', keyOf);
    expect(empty).toEqual({ items: [], next_page_cursor: null });
  });
});
