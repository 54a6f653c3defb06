// Opaque, tamper-evident pagination cursors: base64url(JSON) + "." + HMAC. A cursor names the list it
// belongs to and the position after which the next page starts; anything altered fails verification.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../wire/api-error.js';

export interface CursorPosition {
  /** Which list (and scope, e.g. project) the cursor belongs to. */
  list: string;
  /** Sort key of the last row of the page. */
  key: (string | number)[];
}

/** The one error every unusable cursor gets. */
export function invalidCursor(): ApiError {
  return new ApiError('invalid_cursor', 'Invalid cursor: copy next_page_cursor unchanged from the previous page.');
}

export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.secret).update(payload).digest().subarray(0, 16);
  }

  encode(pos: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify([pos.list, pos.key])).toString('base64url');
    return `${payload}.${this.mac(payload).toString('base64url')}`;
  }

  /**
   * The position a list query continues after: undefined for the first page, which is what an absent
   * cursor and an empty one (`?cursor=`, sent by the official example clients on their first page) both
   * mean. Anything else must decode, or 400 invalid_cursor. Every cursor list goes through here.
   */
  positionOf(cursor: unknown, list: string): CursorPosition | undefined {
    if (cursor === undefined || cursor === '') return undefined;
    if (typeof cursor !== 'string') throw invalidCursor();
    return this.decode(cursor, list);
  }

  /** Returns the position or throws 400 invalid_cursor. */
  decode(cursor: string, list: string): CursorPosition {
    const bad = invalidCursor;
    const dot = cursor.indexOf('.');
    if (dot <= 0 || cursor.length > 2048) throw bad();
    const payload = cursor.slice(0, dot);
    // Compare the MAC as text: base64url decoding ignores stray characters and padding bits, so
    // comparing decoded bytes would accept altered cursors.
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(payload).toString('base64url'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw bad();
    }
    if (!Array.isArray(parsed) || parsed[0] !== list || !Array.isArray(parsed[1])) throw bad();
    return { list, key: parsed[1] as (string | number)[] };
  }
}

export interface Page<T> {
  items: T[];
  next_page_cursor: string | null;
}

/**
 * Turns `limit + 1` fetched rows into a page: the extra row only signals that more exist.
 * `keyOf` gives the sort key that the next query continues after.
 */
export function toPage<T>(rows: T[], limit: number, codec: CursorCodec, list: string, keyOf: (row: T) => (string | number)[]): Page<T> {
  const items = rows.slice(0, limit);
  const more = rows.length > limit;
  const last = items[items.length - 1];
  return { items, next_page_cursor: more && last ? codec.encode({ list, key: keyOf(last) }) : null };
}

/**
 * A cursor whose sort key is two strings (e.g. (created_at, id) or (end_time, id)): the key the page after it
 * starts from, or undefined for the first page (no cursor or an empty one).
 */
export function stringPairAfter(codec: CursorCodec, cursor: unknown, list: string): [string, string] | undefined {
  const pos = codec.positionOf(cursor, list);
  if (pos === undefined) return undefined;
  const key = pos.key;
  if (key.length !== 2 || typeof key[0] !== 'string' || typeof key[1] !== 'string') throw invalidCursor();
  return [key[0], key[1]];
}

/** Lists ordered newest first by (created_at, id): where the page after `cursor` starts, or undefined. */
export function createdAfter(codec: CursorCodec, cursor: string | undefined, list: string): [string, string] | undefined {
  return stringPairAfter(codec, cursor, list);
}

/** toPage for those lists. */
export function pageByCreated<T extends { created_at: string; id: string }>(rows: T[], limit: number, codec: CursorCodec, list: string): Page<T> {
  return toPage(rows, limit, codec, list, (r) => [r.created_at, r.id]);
}
