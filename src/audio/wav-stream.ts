// Incremental WAV (RIFF/WAVE, RF64, BW64) reader for streamed audio: bytes in as they arrive, split anywhere (one byte
// at a time works), mono float samples out once the data chunk starts.
// - Formats decoded here: PCM (8-bit unsigned, 16/24/32-bit signed), IEEE float (32/64-bit), A-law, mu-law, and
//   WAVE_FORMAT_EXTENSIBLE with those subformats; any channel count (averaged to mono, or each channel apart with
//   pushChannels), any rate from 1 to 768 kHz.
// - Other codecs (ADPCM, GSM, MP3-in-WAV...) throw WavNotInProcess; `replay()` then gives every byte received so far,
//   for ffmpeg to decode instead.
// - A data chunk size of 0 or 0xFFFFFFFF (what streaming writers put there before the length is known) means "to the
//   end of the stream". Chunks other than fmt/ds64/data (LIST, fact, bext...) are skipped, before or after the data;
//   bytes after a sized data chunk that do not form a chunk are ignored.
// - A malformed header throws AudioDecodeError("... not a valid WAV stream ...").
import { AudioDecodeError } from './pcm-source.js';
import { SampleDecoder, type SampleEncoding } from './sample-decoder.js';

/** The WAV's codec is not decoded in-process: hand the stream to ffmpeg. */
export class WavNotInProcess extends Error {}

const invalid = (why: string) => new AudioDecodeError(`The audio is not a valid WAV stream: ${why}.`);

const WAVE_FORMAT = { PCM: 1, FLOAT: 3, ALAW: 6, MULAW: 7, EXTENSIBLE: 0xfffe };
/** Bytes 2..16 of every standard KSDATAFORMAT_SUBTYPE GUID (the first two are the format tag). */
const SUBTYPE_TAIL = Buffer.from('000000001000800000aa00389b71', 'hex');
/** Header bytes kept for the ffmpeg fallback until the format is known; a longer header is refused. */
const MAX_HEADER_BYTES = 1 << 20;
const MAX_FMT_BYTES = 4096;

type State = 'riff' | 'chunk' | 'body' | 'skip' | 'data';

export class WavStream {
  private state: State = 'riff';
  /** Bytes of the fixed-size piece being read (RIFF header, chunk header, fmt/ds64 body) and its size. */
  private piece = new Uint8Array(0);
  private need = 12;
  private chunkId = '';
  /** Bytes left in the chunk being skipped or decoded (Infinity: to the end of the stream). */
  private remaining = 0;
  /** Padding byte after an odd-sized data chunk. */
  private pad = 0;
  private rf64 = false;
  /** The data size from an RF64 ds64 chunk, 0 when none. */
  private ds64DataSize = 0;
  private decoder: SampleDecoder | undefined;
  private seenData = false;
  private received = 0;
  private kept: Buffer[] | undefined = [];
  /** Sample rate from the fmt chunk (0 until it was read). */
  sampleRate = 0;
  /** The fmt chunk's encoding and channel count, once read. */
  format: { encoding: SampleEncoding; channels: number } | undefined;
  /** Where the first data chunk's samples start in the stream and its declared length (Infinity: unknown), once seen. */
  data: { offset: number; length: number } | undefined;

  /** Decoded mono samples of `bytes` (none while in the header). Throws AudioDecodeError or WavNotInProcess. */
  push(bytes: Uint8Array): Float32Array[] {
    const out: Float32Array[] = [];
    this.feed(bytes, (data) => {
      const samples = this.decoder!.decode(data);
      if (samples.length) out.push(samples);
    });
    return out;
  }

  /** As push(), each channel's samples apart (multichannel sessions): one array per channel for each piece of data. */
  pushChannels(bytes: Uint8Array): Float32Array[][] {
    const out: Float32Array[][] = [];
    this.feed(bytes, (data) => {
      const channels = this.decoder!.decodeChannels(data);
      if (channels[0]!.length) out.push(channels);
    });
    return out;
  }

  private feed(bytes: Uint8Array, onData: (data: Uint8Array) => void): void {
    this.received += bytes.length;
    if (this.kept) {
      if (this.received > MAX_HEADER_BYTES) throw invalid(`no format chunk in the first ${MAX_HEADER_BYTES} bytes`);
      this.kept.push(Buffer.from(bytes));
    }
    let off = 0;
    while (off < bytes.length) {
      const avail = bytes.length - off;
      if (this.state === 'data' || this.state === 'skip') {
        const n = Math.min(this.remaining, avail);
        if (this.state === 'data') onData(bytes.subarray(off, off + n));
        off += n;
        this.remaining -= n;
        if (this.remaining === 0) this.afterChunk();
        continue;
      }
      const take = Math.min(this.need - this.piece.length, avail);
      const piece = new Uint8Array(this.piece.length + take);
      piece.set(this.piece);
      piece.set(bytes.subarray(off, off + take), this.piece.length);
      this.piece = piece;
      off += take;
      if (piece.length < this.need) break;
      this.piece = new Uint8Array(0);
      this.onPiece(Buffer.from(piece.buffer, piece.byteOffset, piece.length));
      // (onPiece may have moved the state on: the cast undoes the narrowing above.)
      if ((this.state as State) === 'data' && !this.data) this.data = { offset: this.received - bytes.length + off, length: this.remaining };
    }
  }

  /** End of the stream: throws AudioDecodeError when it ended before any audio data. */
  end(): void {
    if (this.received > 0 && !this.seenData) throw invalid('the stream ended before the audio data');
  }

  /** Every byte received so far (for the ffmpeg fallback; only available until the format was accepted). */
  replay(): Buffer[] {
    return this.kept ?? [];
  }

  private afterChunk(): void {
    if (this.state === 'data' && this.pad) {
      this.state = 'skip';
      this.remaining = this.pad;
      this.pad = 0;
      return;
    }
    this.state = 'chunk';
    this.need = 8;
  }

  private onPiece(p: Buffer): void {
    if (this.state === 'riff') {
      const id = p.toString('latin1', 0, 4);
      if ((id !== 'RIFF' && id !== 'RF64' && id !== 'BW64') || p.toString('latin1', 8, 12) !== 'WAVE')
        throw invalid('it does not start with a RIFF WAVE header');
      this.rf64 = id !== 'RIFF';
      this.state = 'chunk';
      this.need = 8;
      return;
    }
    if (this.state === 'chunk') return this.onChunkHeader(p);
    // A chunk body read whole: fmt or ds64.
    if (this.chunkId === 'fmt ') this.onFormat(p);
    else this.ds64DataSize = p.readUInt32LE(8) + p.readUInt32LE(12) * 2 ** 32;
    this.afterChunk();
  }

  private onChunkHeader(p: Buffer): void {
    const id = p.toString('latin1', 0, 4);
    const size = p.readUInt32LE(4);
    if (!/^[\x20-\x7e]{4}$/.test(id)) {
      if (!this.seenData) throw invalid('a chunk header is malformed');
      // Bytes after a sized data chunk that are no chunk: ignored, as ffmpeg does.
      this.state = 'skip';
      this.remaining = Infinity;
      return;
    }
    this.chunkId = id;
    if ((id === 'fmt ' && !this.decoder) || (id === 'ds64' && this.rf64)) {
      if (size < (id === 'fmt ' ? 16 : 28) || size > MAX_FMT_BYTES) throw invalid(`the ${id.trim()} chunk has a bad size (${size})`);
      this.state = 'body';
      this.need = size + (size & 1);
    } else if (id === 'data') {
      if (!this.decoder) throw invalid('audio data comes before the format chunk');
      this.seenData = true;
      this.state = 'data';
      let length = size === 0xffffffff && this.rf64 ? this.ds64DataSize : size;
      if (length === 0 || length === 0xffffffff) length = Infinity; // streamed: length unknown
      this.remaining = length;
      this.pad = length & 1;
    } else {
      this.state = 'skip';
      this.remaining = size + (size & 1);
    }
    if (this.remaining === 0 && (this.state === 'skip' || this.state === 'data')) this.afterChunk();
  }

  private onFormat(p: Buffer): void {
    let tag = p.readUInt16LE(0);
    const channels = p.readUInt16LE(2);
    const rate = p.readUInt32LE(4);
    const blockAlign = p.readUInt16LE(12);
    const bits = p.readUInt16LE(14);
    if (tag === WAVE_FORMAT.EXTENSIBLE) {
      if (p.length < 40) throw invalid('the extensible format chunk is too short');
      if (!p.subarray(26, 40).equals(SUBTYPE_TAIL)) throw new WavNotInProcess('non-standard subformat');
      tag = p.readUInt16LE(24);
    }
    if (channels === 0) throw invalid('it has zero channels');
    if (rate < 1 || rate > 768_000) throw invalid(`its sample rate ${rate} Hz is out of range`);
    const enc = encodingOf(tag, bits);
    if (!enc) throw new WavNotInProcess(`format tag ${tag}`);
    // (0 is taken as unset.)
    if (blockAlign !== 0 && blockAlign !== channels * (bits / 8)) {
      // Padded frames or a wrong header: leave the interpretation to ffmpeg.
      if (blockAlign > channels * (bits / 8)) throw new WavNotInProcess('padded frames');
      throw invalid(`its block alignment ${blockAlign} does not fit ${channels} channels of ${bits} bits`);
    }
    this.decoder = new SampleDecoder(enc, channels);
    this.format = { encoding: enc, channels };
    this.sampleRate = rate;
    this.kept = undefined;
  }
}

/** The encoding of a WAV format tag and sample size; undefined for codecs left to ffmpeg; throws when malformed. */
function encodingOf(tag: number, bits: number): SampleEncoding | undefined {
  const bad = () => invalid(`${bits} bits per sample is not allowed for format ${tag}`);
  switch (tag) {
    case WAVE_FORMAT.PCM:
      if (bits === 8) return { kind: 'uint', bits, bigEndian: false };
      if (bits === 16 || bits === 24 || bits === 32) return { kind: 'int', bits, bigEndian: false };
      if (bits === 64) return undefined;
      throw bad();
    case WAVE_FORMAT.FLOAT:
      if (bits === 32 || bits === 64) return { kind: 'float', bits, bigEndian: false };
      throw bad();
    case WAVE_FORMAT.ALAW:
    case WAVE_FORMAT.MULAW:
      if (bits === 8) return { kind: tag === WAVE_FORMAT.ALAW ? 'alaw' : 'mulaw', bits, bigEndian: false };
      throw bad();
    default:
      return undefined;
  }
}
