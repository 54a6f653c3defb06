// The live conversation in each container format (`npm run bench -- live --formats=...`): the conversation's 16 kHz
// mono samples encoded by ffmpeg into the container with ffmpeg's defaults for it (what `ffmpeg -i in out.ogg` writes:
// 24 kbps mp3 in 36 ms frames, Opus at ~75 kbps in 20 ms packets in Ogg pages of up to 1 s or WebM blocks, 72 ms
// FLAC frames), and sent with `audio_format: "auto"` at real-time pace with the bytes proportional to audio time:
// piece k (sent at k × 20 ms, as the pcm stream's piece k with audio [20k, 20k + 20) ms) holds the bytes up to where
// audio time 20k + 20 ms lies, the header with the first piece. Where that lies is interpolated within each audio packet (its bytes spread evenly over
// its audio), so a packet is complete in the piece that holds its audio's end, as pcm's samples are. An even split of
// the whole file would send a variable-bitrate stream's packets early or late, and count the client's lateness as the
// server's: FLAC's up to 8.4 s late on this conversation, whose 16 kHz clips take twice the bytes of the 8 kHz-band ones.
// Packet times and byte positions come from ffprobe; an Ogg packet's bytes from the page's segment table (ffprobe
// places every packet of a page at the page's start).
// `pcm` is the suite's own stream (`pcm_s16le`, 16 kHz mono, 20 ms a piece).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Conversation } from './live-conversation.js';
import { percentile, round } from './lib.js';
import { BYTES_PER_MS, CHUNK_MS } from './realtime-stream.js';

const execFileP = promisify(execFile);

/** ffmpeg output options of each container (after the 16 kHz mono s16le input); null: raw pcm_s16le. */
export const LIVE_FORMATS: Record<string, { ext: string; encode: string[] } | null> = {
  pcm: null,
  wav: { ext: 'wav', encode: ['-f', 'wav'] },
  mp3: { ext: 'mp3', encode: ['-c:a', 'libmp3lame', '-f', 'mp3'] },
  'ogg-opus': { ext: 'ogg', encode: ['-c:a', 'libopus', '-f', 'ogg'] },
  'webm-opus': { ext: 'webm', encode: ['-c:a', 'libopus', '-f', 'webm'] },
  flac: { ext: 'flac', encode: ['-c:a', 'flac', '-f', 'flac'] },
};

/** What one session sends: the format part of its configuration and piece k at k × 20 ms (an empty piece is not sent). */
export interface Payload {
  config: Record<string, unknown>;
  pieces: Buffer[];
}

export interface EncodedFormat {
  payload: Payload;
  /** For the JSON: the ffmpeg options, sizes, and how late the even schedule sends packets' last bytes. */
  about: Record<string, unknown>;
}

/** `--formats=a,b`: the names, checked. */
export function parseFormats(option: string): string[] {
  const names = option.split(',').filter(Boolean);
  const unknown = names.filter((n) => !Object.hasOwn(LIVE_FORMATS, n));
  if (!names.length || unknown.length)
    throw new Error(`--formats=${option}: ${unknown.length ? `unknown ${unknown.join(', ')}; ` : ''}choose from ${Object.keys(LIVE_FORMATS).join(',')}`);
  return names;
}

/** The suite's own pcm_s16le stream: 20 ms of samples a piece. */
export function pcmPayload(conversation: Conversation): Payload {
  const pieceBytes = CHUNK_MS * BYTES_PER_MS;
  const pieces = Array.from({ length: Math.ceil(conversation.pcm.length / pieceBytes) }, (_, k) =>
    conversation.pcm.subarray(k * pieceBytes, (k + 1) * pieceBytes),
  );
  return { config: { audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }, pieces };
}

/** The conversation encoded as `name` (files in `dir`), split into real-time pieces proportional to audio time. */
export async function encodeConversation(name: string, conversation: Conversation, dir: string): Promise<EncodedFormat> {
  const format = LIVE_FORMATS[name];
  if (!format) return { payload: pcmPayload(conversation), about: { audio_format: 'pcm_s16le' } };
  const input = path.join(dir, 'conversation.pcm');
  const out = path.join(dir, `conversation.${format.ext}`);
  await writeFile(input, conversation.pcm);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 's16le', '-ar', '16000', '-ac', '1', '-i', input, ...format.encode, out]);
  const bytes = await readFile(out);
  const { stdout } = await execFileP(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'packet=pts_time,duration_time,pos', '-of', 'json', out],
    {
      maxBuffer: 256 * 2 ** 20,
    },
  );
  const packets = ((JSON.parse(stdout) as { packets?: { pts_time?: string; duration_time?: string; pos?: string }[] }).packets ?? [])
    .map((p) => ({ pos: Number(p.pos), endMs: (Number(p.pts_time) + Number(p.duration_time)) * 1000 }))
    .filter((p) => Number.isFinite(p.pos) && Number.isFinite(p.endMs));
  if (!packets.length) throw new Error(`ffprobe found no audio packets in ${out}`);

  // Each packet's byte range: up to where the next one starts (an Ogg packet: where its last segment ends).
  const oggEnds = format.ext === 'ogg' ? oggPacketEnds(bytes).slice(-packets.length) : undefined;
  if (oggEnds && oggEnds.length !== packets.length) throw new Error(`${out}: ${oggEnds.length} Ogg packets for ffprobe's ${packets.length}`);
  const points = [{ ms: 0, byte: packets[0]!.pos }];
  packets.forEach((p, i) => {
    const last = points[points.length - 1]!;
    const byte = oggEnds?.[i] ?? packets[i + 1]?.pos ?? bytes.length;
    points.push({ ms: Math.max(last.ms, p.endMs), byte: Math.max(last.byte, byte) });
  });
  /** Bytes sent once audio up to `ms` has been. */
  let j = 1;
  const byteAt = (ms: number): number => {
    while (j < points.length && points[j]!.ms < ms) j++;
    if (j >= points.length) return bytes.length;
    const [a, b] = [points[j - 1]!, points[j]!];
    return Math.round(b.ms === a.ms ? b.byte : a.byte + ((b.byte - a.byte) * (ms - a.ms)) / (b.ms - a.ms));
  };
  const n = Math.ceil(conversation.pcm.length / (CHUNK_MS * BYTES_PER_MS));
  const ends = Array.from({ length: n }, (_, k) => (k === n - 1 ? bytes.length : byteAt((k + 1) * CHUNK_MS)));
  const pieces = ends.map((end, k) => bytes.subarray(k === 0 ? 0 : ends[k - 1]!, end));
  const packetMs = packets.slice(1).map((p, i) => p.endMs - packets[i]!.endMs);
  return {
    payload: { config: { audio_format: 'auto' }, pieces },
    about: {
      audio_format: 'auto',
      ffmpeg_encode: format.encode,
      bytes: bytes.length,
      header_bytes: packets[0]!.pos,
      kbps: round((bytes.length * 8) / (conversation.pcm.length / BYTES_PER_MS), 1),
      packet_ms_p50: round(percentile(packetMs, 50), 1),
      packets: packets.length,
    },
  };
}

/** Where each packet of an Ogg stream ends (byte offset after its last segment), in stream order. */
function oggPacketEnds(bytes: Buffer): number[] {
  const ends: number[] = [];
  let off = 0;
  while (off + 27 <= bytes.length && bytes.toString('latin1', off, off + 4) === 'OggS') {
    const segments = bytes[off + 26]!;
    let at = off + 27 + segments;
    for (let i = 0; i < segments; i++) {
      const lacing = bytes[off + 27 + i]!;
      at += lacing;
      if (lacing < 255) ends.push(at);
    }
    off = at;
  }
  return ends;
}
