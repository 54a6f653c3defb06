import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { watchCloseDelimiter } from './multipart-close.js';

const TYPE = 'multipart/form-data; boundary=XyZ123';
const BODY = Buffer.from('--XyZ123\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue\r\n--XyZ123--\r\n', 'latin1');

function feed(chunks: Buffer[], contentType = TYPE): boolean {
  const raw = new PassThrough();
  const closed = watchCloseDelimiter(raw, contentType);
  raw.resume();
  for (const c of chunks) raw.write(c);
  return closed();
}

describe('watchCloseDelimiter', () => {
  it('finds the close delimiter wherever the chunks split it', () => {
    for (let cut = 0; cut <= BODY.length; cut++) expect(feed([BODY.subarray(0, cut), BODY.subarray(cut)]), `cut at ${cut}`).toBe(true);
  });

  it('finds it when the body arrives one byte at a time', () => {
    expect(feed([...BODY].map((b) => Buffer.from([b])))).toBe(true);
  });

  it('reports a body cut off before the close delimiter', () => {
    const cut = BODY.subarray(0, BODY.indexOf('--XyZ123--'));
    expect(feed([cut])).toBe(false);
    // A part boundary (no trailing "--") is not the close delimiter.
    expect(feed([Buffer.from('--XyZ123\r\nx\r\n--XyZ123\r\n', 'latin1')])).toBe(false);
  });

  it('accepts a close delimiter at the very start of the body and a quoted boundary', () => {
    expect(feed([Buffer.from('--XyZ123--', 'latin1')])).toBe(true);
    expect(feed([BODY], 'multipart/form-data; boundary="XyZ123"')).toBe(true);
  });

  it('never reports success without a boundary in the content type', () => {
    expect(feed([BODY], 'multipart/form-data')).toBe(false);
  });
});
