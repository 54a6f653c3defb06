// A Wyoming client written from the protocol's documentation (github.com/rhasspy/wyoming): a JSON header line per
// event, then `data_length` bytes of extra JSON data, then `payload_length` bytes of payload. Every answer must carry
// a protocol version 1.x.y. Used by the Wyoming test files and the Wyoming benchmark.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Event {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

/** A Wyoming client: write events, read them back one at a time. */
export class WyomingClient {
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  static open(port: number): Promise<WyomingClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new WyomingClient(socket)));
      socket.once('error', reject);
    });
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Bytes received and not yet read: an answer has begun to come. */
  get buffered(): number {
    return this.buf.length;
  }

  writeRaw(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /** Data in the header's `data` or after it (both are valid; the reference library writes it after). */
  write(type: string, data?: Record<string, unknown>, payload?: Buffer, dataInline = false): void {
    const header: Record<string, unknown> = { type, version: '1.7.0' };
    let extra: Buffer | undefined;
    if (data && dataInline) header.data = data;
    else if (data) {
      extra = Buffer.from(JSON.stringify(data));
      header.data_length = extra.length;
    }
    if (payload) header.payload_length = payload.length;
    this.socket.write(Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), extra ?? Buffer.alloc(0), payload ?? Buffer.alloc(0)]));
  }

  private async need(n: number, deadline: number): Promise<void> {
    while (this.buf.length < n) {
      if (this.closed) throw new Error('connection closed');
      if (Date.now() > deadline) throw new Error('timed out waiting for an event');
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }

  async read(timeoutMs = 60_000): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    let nl = this.buf.indexOf(0x0a);
    while (nl < 0) {
      await this.need(this.buf.length + 1, deadline);
      nl = this.buf.indexOf(0x0a);
    }
    const header = JSON.parse(this.buf.subarray(0, nl).toString()) as {
      type: string;
      data?: Record<string, unknown>;
      data_length?: number;
      payload_length?: number;
      version: string;
    };
    if (!/^1\.\d+\.\d+$/.test(String(header.version))) throw new Error(`event ${header.type} has no protocol version 1.x.y: ${header.version}`);
    const dl = header.data_length ?? 0;
    const pl = header.payload_length ?? 0;
    await this.need(nl + 1 + dl + pl, deadline);
    const data = { ...(header.data ?? {}), ...(dl ? (JSON.parse(this.buf.subarray(nl + 1, nl + 1 + dl).toString()) as Record<string, unknown>) : {}) };
    const event: Event = { type: header.type, data };
    if (pl) event.payload = Buffer.from(this.buf.subarray(nl + 1 + dl, nl + 1 + dl + pl));
    this.buf = this.buf.subarray(nl + 1 + dl + pl);
    return event;
  }

  /** Events until (and including) one of `types`. */
  async readUntil(...types: string[]): Promise<Event[]> {
    const out: Event[] = [];
    for (;;) {
      const e = await this.read();
      out.push(e);
      if (types.includes(e.type)) return out;
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}
