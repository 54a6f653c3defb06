// Plays 16-bit little-endian PCM chunks as they arrive (TTS WebSocket streaming): each chunk is scheduled right
// after the previous one, so playback starts with the first chunk, not after the last.
export class PcmPlayer {
  private readonly ctx: AudioContext;
  private at = 0;
  private carry: Uint8Array | null = null;
  private last: AudioBufferSourceNode | null = null;
  /** performance.now() when the first chunk started playing; null until then. */
  firstPlayedAt: number | null = null;

  constructor(private readonly sampleRate: number) {
    this.ctx = new AudioContext({ sampleRate });
  }

  push(bytes: Uint8Array): void {
    // A chunk may split a sample: keep the odd byte for the next one.
    if (this.carry) {
      const joined = new Uint8Array(this.carry.length + bytes.length);
      joined.set(this.carry);
      joined.set(bytes, this.carry.length);
      bytes = joined;
      this.carry = null;
    }
    if (bytes.length % 2) {
      this.carry = bytes.slice(-1);
      bytes = bytes.slice(0, -1);
    }
    const n = bytes.length / 2;
    if (!n) return;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const buffer = this.ctx.createBuffer(1, n, this.sampleRate);
    const ch = buffer.getChannelData(0);
    for (let i = 0; i < n; i++) ch[i] = view.getInt16(i * 2, true) / 0x8000;
    const src = this.ctx.createBufferSource();
    src.buffer = buffer;
    src.connect(this.ctx.destination);
    this.at = Math.max(this.at, this.ctx.currentTime + 0.05);
    src.start(this.at);
    this.at += buffer.duration;
    this.firstPlayedAt ??= performance.now();
    this.last = src;
  }

  /** Resolves when everything scheduled has played. */
  async drained(): Promise<void> {
    const last = this.last;
    if (last) await new Promise<void>((r) => last.addEventListener('ended', () => r(), { once: true }));
  }

  async close(): Promise<void> {
    await this.ctx.close();
  }
}

export function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
