import { describe, expect, it } from 'vitest';
import { encodeEvent, EventParser, FramingError, WYOMING_VERSION } from './framing.js';

describe('Wyoming framing', () => {
  it('writes a header line, then the data, then the payload', () => {
    const bytes = encodeEvent({ type: 'audio-chunk', data: { rate: 16000, width: 2, channels: 1 }, payload: Buffer.from([1, 2, 3, 4]) });
    const nl = bytes.indexOf(0x0a);
    const header = JSON.parse(bytes.subarray(0, nl).toString()) as Record<string, unknown>;
    expect(header).toEqual({ type: 'audio-chunk', version: WYOMING_VERSION, data_length: 37, payload_length: 4 });
    expect(JSON.parse(bytes.subarray(nl + 1, nl + 38).toString())).toEqual({ rate: 16000, width: 2, channels: 1 });
    expect([...bytes.subarray(nl + 38)]).toEqual([1, 2, 3, 4]);
    // No data, no payload: the header line alone.
    expect(encodeEvent({ type: 'audio-stop' }).toString()).toBe(`{"type":"audio-stop","version":"${WYOMING_VERSION}"}\n`);
  });

  it('reads events split anywhere, merging inline and extra data', () => {
    const a = encodeEvent({ type: 'transcribe', data: { language: 'en' } });
    const b = Buffer.concat([
      Buffer.from('{"type":"audio-chunk","data":{"rate":22050},"data_length":25,"payload_length":3}\n'),
      Buffer.from('{"width":2,"channels":1}\n'.slice(0, 25)),
      Buffer.from([9, 8, 7]),
    ]);
    const all = Buffer.concat([a, Buffer.from('\n'), b]);
    const p = new EventParser();
    const events = [];
    for (let i = 0; i < all.length; i++) events.push(...p.push(all.subarray(i, i + 1)));
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({ type: 'transcribe', data: { language: 'en' } });
    expect(events[1]!.data).toEqual({ rate: 22050, width: 2, channels: 1 });
    expect([...events[1]!.payload!]).toEqual([9, 8, 7]);
  });

  it('refuses malformed and oversized input', () => {
    const code = (bytes: string | Buffer, limits?: ConstructorParameters<typeof EventParser>[0]) => {
      try {
        new EventParser(limits).push(Buffer.from(bytes));
      } catch (err) {
        expect(err).toBeInstanceOf(FramingError);
        return (err as FramingError).code;
      }
      return 'none';
    };
    expect(code('not json\n')).toBe('invalid_header');
    expect(code('[1,2]\n')).toBe('invalid_header');
    expect(code('{"data":{}}\n')).toBe('invalid_header');
    expect(code('{"type":"x","data_length":-1}\n')).toBe('invalid_header');
    expect(code('{"type":"x","data_length":2}\n[]')).toBe('invalid_data');
    const limits = { maxHeaderBytes: 100, maxDataBytes: 10, maxPayloadBytes: 20 };
    expect(code('{"type":"x","payload_length":21}\n', limits)).toBe('too_large');
    expect(code('{"type":"x","data_length":11}\n', limits)).toBe('too_large');
    expect(code('{"type":"' + 'x'.repeat(200), limits)).toBe('too_large');
    expect(code('{"type":"x","payload_length":20}\n', limits)).toBe('none');
  });
});
