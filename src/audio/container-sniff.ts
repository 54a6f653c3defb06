// Container detection from the first bytes of a stream, so that `audio_format: "auto"` starts ffmpeg with an explicit
// demuxer (no probing: ffmpeg's probe waits for kilobytes of input) or takes WAV in-process.

/** Bytes needed to recognise every container below (the ASF GUID is the longest signature). */
export const SNIFF_BYTES = 16;

/** ffmpeg demuxer of each container name (the name itself unless listed). */
const DEMUXERS: Record<string, string> = { webm: 'matroska', mp4: 'mov' };

export const demuxerOf = (format: string): string => DEMUXERS[format] ?? format;

const ASF_GUID = Buffer.from('3026b2758e66cf11a6d900aa0062ce6c', 'hex');
const EBML = Buffer.from('1a45dfa3', 'hex');

/** The container name ("wav", "mp3", "webm"...) of a stream starting with `bytes` (at least SNIFF_BYTES of it, or
 * all of a shorter stream); undefined when unknown. */
export function sniffContainer(bytes: Uint8Array): string | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = (s: string, off = 0) => b.length >= off + s.length && b.toString('latin1', off, off + s.length) === s;
  // RIFF with another form type (AVI, ...) is for ffmpeg; with WAVE or garbage, the WAV reader accepts or refuses it.
  if ((at('RIFF') || at('RF64') || at('BW64')) && (at('WAVE', 8) || !/^[\x20-\x7e]{4}$/.test(b.toString('latin1', 8, 12)))) return 'wav';
  if (at('ID3')) return 'mp3';
  if (at('OggS')) return 'ogg';
  if (b.subarray(0, 4).equals(EBML)) return 'webm';
  if (at('fLaC')) return 'flac';
  if (at('#!AMR')) return 'amr';
  if (at('FORM') && (at('AIFF', 8) || at('AIFC', 8))) return 'aiff';
  if (b.subarray(0, 16).equals(ASF_GUID)) return 'asf';
  if (at('ADIF')) return 'aac';
  if (at('ftyp', 4)) return 'mp4';
  if (at('caff')) return 'caf';
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) {
    // 11 sync bits: ADTS AAC when the layer bits are 00 (and the 12th sync bit is set), else an MPEG audio frame.
    if ((b[1]! & 0xf6) === 0xf0) return 'aac';
    if ((b[1]! & 0x06) !== 0) return 'mp3';
  }
  return undefined;
}
