// Wyoming protocol framing (https://github.com/rhasspy/wyoming): every event is one JSON header line
//   {"type": "...", "data": {...}?, "data_length": N?, "payload_length": N?, "version": "x.y.z"}\n
// followed by `data_length` bytes of JSON merged into `data`, then `payload_length` bytes of payload (audio).
// The parser is incremental (bytes arrive in any split) and bounded: a header line, extra data or payload over its
// cap is a FramingError, as is a line that is not a JSON object with a string `type`.

/** Protocol version written on every event (transcript streaming is from 1.8). */
export const WYOMING_VERSION = '1.8.0';

export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

export interface FramingLimits {
  /** Longest header line, newline excluded. */
  maxHeaderBytes: number;
  maxDataBytes: number;
  maxPayloadBytes: number;
}

export const DEFAULT_LIMITS: FramingLimits = {
  maxHeaderBytes: 64 * 1024,
  maxDataBytes: 1024 * 1024,
  // An audio chunk is typically 1024 samples (2 KiB); 4 MiB is seconds of audio at any rate.
  maxPayloadBytes: 4 * 1024 * 1024,
};

/** A broken stream: the connection cannot be read further (the message goes into an `error` event). */
export class FramingError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One event as bytes. Data goes after the header line (as the reference implementation writes it). */
export function encodeEvent(event: { type: string; data?: Record<string, unknown>; payload?: Uint8Array }): Buffer {
  const header: Record<string, unknown> = { type: event.type, version: WYOMING_VERSION };
  const parts: Buffer[] = [];
  let dataBytes: Buffer | undefined;
  if (event.data && Object.keys(event.data).length) {
    dataBytes = Buffer.from(JSON.stringify(event.data), 'utf8');
    header.data_length = dataBytes.length;
  }
  if (event.payload?.length) header.payload_length = event.payload.length;
  parts.push(Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'));
  if (dataBytes) parts.push(dataBytes);
  if (event.payload?.length) parts.push(Buffer.from(event.payload.buffer, event.payload.byteOffset, event.payload.byteLength));
  return Buffer.concat(parts);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function lengthField(header: Record<string, unknown>, key: string, max: number): number {
  const v = header[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new FramingError('invalid_header', `${key} must be a non-negative integer.`);
  if (v > max) throw new FramingError('too_large', `${key} ${v} is over this server's limit of ${max} bytes.`);
  return v;
}

/** Incremental reader: push() bytes, get the complete events back. After a FramingError the parser is unusable. */
export class EventParser {
  private buf: Buffer = Buffer.alloc(0);
  /** The header of the event whose data/payload bytes are still arriving. */
  private pending: { type: string; data: Record<string, unknown>; dataLength: number; payloadLength: number } | undefined;

  constructor(private readonly limits: FramingLimits = DEFAULT_LIMITS) {}

  push(bytes: Uint8Array): WyomingEvent[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, bytes]) : Buffer.from(bytes);
    const out: WyomingEvent[] = [];
    for (;;) {
      if (!this.pending) {
        const nl = this.buf.indexOf(0x0a);
        if (nl < 0) {
          if (this.buf.length > this.limits.maxHeaderBytes)
            throw new FramingError('too_large', `Header line is longer than this server's limit of ${this.limits.maxHeaderBytes} bytes.`);
          return out;
        }
        if (nl > this.limits.maxHeaderBytes)
          throw new FramingError('too_large', `Header line is longer than this server's limit of ${this.limits.maxHeaderBytes} bytes.`);
        const line = this.buf.subarray(0, nl).toString('utf8').trim();
        this.buf = this.buf.subarray(nl + 1);
        if (!line) continue; // blank lines between events are harmless
        let header: unknown;
        try {
          header = JSON.parse(line);
        } catch {
          throw new FramingError('invalid_header', 'Header line is not valid JSON.');
        }
        if (!isObject(header)) throw new FramingError('invalid_header', 'Header line must be a JSON object.');
        if (typeof header.type !== 'string' || !header.type) throw new FramingError('invalid_header', 'Header line has no "type".');
        if (header.data !== undefined && header.data !== null && !isObject(header.data))
          throw new FramingError('invalid_header', '"data" must be a JSON object.');
        this.pending = {
          type: header.type,
          data: isObject(header.data) ? { ...header.data } : {},
          dataLength: lengthField(header, 'data_length', this.limits.maxDataBytes),
          payloadLength: lengthField(header, 'payload_length', this.limits.maxPayloadBytes),
        };
      }
      const p = this.pending;
      if (this.buf.length < p.dataLength + p.payloadLength) return out;
      if (p.dataLength) {
        let extra: unknown;
        try {
          extra = JSON.parse(this.buf.subarray(0, p.dataLength).toString('utf8'));
        } catch {
          throw new FramingError('invalid_data', `The ${p.type} event's data is not valid JSON.`);
        }
        if (!isObject(extra)) throw new FramingError('invalid_data', `The ${p.type} event's data must be a JSON object.`);
        Object.assign(p.data, extra);
      }
      const event: WyomingEvent = { type: p.type, data: p.data };
      // Copied out: the connection's buffer is reused for what follows.
      if (p.payloadLength) event.payload = Buffer.from(this.buf.subarray(p.dataLength, p.dataLength + p.payloadLength));
      this.buf = this.buf.subarray(p.dataLength + p.payloadLength);
      this.pending = undefined;
      out.push(event);
    }
  }
}
