// Token lag per audio format for the realtime suite: the same clips encoded with ffmpeg as a live client's encoder
// would produce them, streamed at real-time pace (stream() in realtime-stream.ts), one session at a time on a warm
// server. The encoded file goes out in pieces of 20 ms of audio, piece k at k × 20 ms holding every packet whose audio
// ends by (k + 1) × 20 ms (packet times and byte positions from ffprobe), the header with the first piece: what a live
// encoder hands over. Packets longer than 20 ms (mp3 36 ms, flac 72 ms at 16 kHz) leave some pieces empty (not sent).
// WAV has no packets of its own (ffprobe's are its demuxer's 4 KiB reads): its samples go out 20 ms a piece.
// An even split of the bytes (bytes × 20 ms / duration) would be the same for constant-bitrate formats but sends a
// variable-bitrate stream's packets early or late: flac's up to ~0.45 s late on these clips (raw:
// even_split_late_ms_max), which would be counted as server lag.
// pcm_s16le is not measured here: the suite's sequential pcm sessions give its lags.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { round, type Row, summarize } from './lib.js';
import { CHUNK_MS, type Clip, clipMs, type Payload, stream, type StreamResult } from './realtime-stream.js';

const execFileP = promisify(execFile);

export interface Format {
  name: string;
  ext: string;
  /** ffmpeg output options (after the 16 kHz mono s16le input). */
  encode: string[];
  /** Split the bytes after the header evenly over the duration instead of by packet times (uncompressed audio). */
  even?: boolean;
}

/** The compressed and container formats, each sent as `audio_format: "auto"`. */
export const FORMATS: Format[] = [
  { name: 'wav', ext: 'wav', encode: ['-f', 'wav'], even: true },
  { name: 'mp3', ext: 'mp3', encode: ['-c:a', 'libmp3lame', '-b:a', '48k', '-f', 'mp3'] },
  // A live Ogg writer flushes pages often (ffmpeg's file default is one page a second), as in src/audio/live-pcm.test.ts.
  { name: 'ogg-opus', ext: 'ogg', encode: ['-c:a', 'libopus', '-b:a', '32k', '-page_duration', '20000', '-f', 'ogg'] },
  { name: 'webm-opus', ext: 'webm', encode: ['-c:a', 'libopus', '-b:a', '32k', '-f', 'webm'] },
  { name: 'flac', ext: 'flac', encode: ['-c:a', 'flac', '-f', 'flac'] },
];

/** Lags of one format over its sessions. */
export interface FormatLags {
  /** New words (see realtime-stream.ts). */
  nonFinal: number[];
  /** Every distinct non-final token, revisions of earlier words included. */
  nonFinalRevisions: number[];
  final: number[];
  finalAfterEndpoint: number[];
  firstNonFinal: number[];
  sessions: number;
  errors: number;
}

export function collectLags(results: StreamResult[]): FormatLags {
  const all = (pick: (r: StreamResult) => number[]) => results.flatMap(pick).map((v) => round(v, 1));
  return {
    nonFinal: all((r) => r.nonFinalLagMs),
    nonFinalRevisions: all((r) => r.nonFinalRevisionLagMs),
    final: all((r) => r.finalLagMs),
    finalAfterEndpoint: all((r) => r.finalAfterEndpointMs),
    firstNonFinal: all((r) => (r.firstNonFinalMs === null ? [] : [r.firstNonFinalMs])),
    sessions: results.length,
    errors: results.filter((r) => r.error).length,
  };
}

/** p50 / p95 / … of each kind of lag (for the JSON). */
export function lagSummary(lags: FormatLags): Record<string, ReturnType<typeof summarize> | null> {
  const of = (xs: number[]) => (xs.length ? summarize(xs) : null);
  return {
    non_final_new_words: of(lags.nonFinal),
    non_final_every_revision: of(lags.nonFinalRevisions),
    final_from_endpoint: of(lags.finalAfterEndpoint),
    final_as_sent: of(lags.final),
    first_non_final: of(lags.firstNonFinal),
  };
}

interface Packet {
  /** Byte position in the file. */
  pos: number;
  /** Audio time at the packet's end, ms. */
  endMs: number;
}

interface Encoded {
  bytes: Buffer;
  packets: Packet[];
}

async function encode(dir: string, clip: Clip, i: number, format: Format): Promise<Encoded> {
  const input = path.join(dir, `c${i}.pcm`);
  const out = path.join(dir, `c${i}.${format.ext}`);
  await writeFile(input, clip.pcm);
  await execFileP('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 's16le', '-ar', '16000', '-ac', '1', '-i', input, ...format.encode, out]);
  const { stdout } = await execFileP(
    'ffprobe',
    ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'packet=pts_time,duration_time,pos', '-of', 'json', out],
    {
      maxBuffer: 16 * 2 ** 20,
    },
  );
  const listed = (JSON.parse(stdout) as { packets?: { pts_time?: string; duration_time?: string; pos?: string }[] }).packets ?? [];
  const packets = listed
    .map((p) => ({ pos: Number(p.pos), endMs: (Number(p.pts_time) + Number(p.duration_time)) * 1000 }))
    .filter((p) => Number.isFinite(p.pos) && Number.isFinite(p.endMs));
  if (!packets.length) throw new Error(`ffprobe found no audio packets in ${out}`);
  return { bytes: await readFile(out), packets };
}

/** Piece k: from the first packet not yet sent up to the first packet whose audio ends after (k + 1) × 20 ms. */
function split({ bytes, packets }: Encoded, durationMs: number): Buffer[] {
  const pieces: Buffer[] = [];
  let from = 0;
  let next = 0;
  for (let k = 0; k < Math.ceil(durationMs / CHUNK_MS); k++) {
    while (next < packets.length && packets[next]!.endMs <= (k + 1) * CHUNK_MS) next++;
    const to = next < packets.length ? packets[next]!.pos : bytes.length;
    pieces.push(bytes.subarray(from, Math.max(from, to)));
    from = Math.max(from, to);
  }
  if (from < bytes.length) pieces[pieces.length - 1] = Buffer.concat([pieces[pieces.length - 1]!, bytes.subarray(from)]);
  return pieces;
}

/** The header with the first piece, the rest evenly in one piece per 20 ms. */
function evenSplit({ bytes, packets }: Encoded, durationMs: number): Buffer[] {
  const header = packets[0]!.pos;
  const n = Math.ceil(durationMs / CHUNK_MS);
  const at = (k: number) => header + Math.round((k * (bytes.length - header)) / n);
  return Array.from({ length: n }, (_, k) => bytes.subarray(k === 0 ? 0 : at(k), at(k + 1)));
}

/** How late an even split of the bytes over the duration would send the latest packet, ms. */
function evenSplitLateMs({ bytes, packets }: Encoded, durationMs: number): number {
  const header = packets[0]!.pos;
  const n = Math.ceil(durationMs / CHUNK_MS);
  return Math.max(
    ...packets.map((p, i) => {
      const end = packets[i + 1]?.pos ?? bytes.length;
      const piece = Math.max(0, Math.ceil(((end - header) * n) / (bytes.length - header)) - 1);
      return piece * CHUNK_MS - p.endMs;
    }),
  );
}

export async function encodePayloads(dir: string, clips: Clip[], format: Format): Promise<{ payloads: Payload[]; raw: Record<string, number[]> }> {
  const encoded = await Promise.all(clips.map((clip, i) => encode(dir, clip, i, format)));
  const durations = clips.map(clipMs);
  const packetMs = encoded.map((e) => summarize(e.packets.slice(1).map((p, i) => p.endMs - e.packets[i]!.endMs)).p50);
  return {
    payloads: encoded.map((e, i) => ({ config: { audio_format: 'auto' }, pieces: (format.even ? evenSplit : split)(e, durations[i]!) })),
    raw: {
      header_bytes: encoded.map((e) => e.packets[0]!.pos),
      total_bytes: encoded.map((e) => e.bytes.length),
      packet_ms: packetMs.map((v) => round(v, 1)),
      even_split_late_ms_max: encoded.map((e, i) => round(evenSplitLateMs(e, durations[i]!), 0)),
    },
  };
}

/** Every format's sessions, one after another on the warm server. */
export async function measureFormats(
  wsUrl: string,
  apiKey: string,
  dir: string,
  clips: Clip[],
  log: (m: string) => void,
): Promise<Record<string, FormatLags & { encode: string[]; files: Record<string, number[]> }>> {
  const out: Record<string, FormatLags & { encode: string[]; files: Record<string, number[]> }> = {};
  for (const format of FORMATS) {
    log(`token lag: ${clips.length} ${format.name} sessions (audio_format auto) at real-time pace`);
    const { payloads, raw } = await encodePayloads(dir, clips, format);
    const results: StreamResult[] = [];
    for (let i = 0; i < clips.length; i++) results.push(await stream(wsUrl, apiKey, clips[i]!, payloads[i]!));
    out[format.name] = { ...collectLags(results), encode: format.encode, files: raw };
  }
  return out;
}

/** "p50 …, p95 … (n unit)"; without a unit, no count. */
const lagText = (samples: number[], unit?: string) => {
  if (samples.length === 0) return { text: `no ${unit ?? 'tokens'}`, p95: Infinity };
  const s = summarize(samples);
  return { text: `p50 ${round(s.p50, 0)} ms, p95 ${round(s.p95, 0)} ms${unit ? ` (${s.count} ${unit})` : ''}`, p95: s.p95 };
};

/**
 * Two rows per format. Non-final: new words (target p95 ≤ 300 ms), with every revision counted alongside. Final: from
 * the endpoint (target p95 ≤ 1 s), and as sent, which includes the rest of the utterance and the 600 ms pause.
 */
export function lagRows(label: string, lags: FormatLags): Row[] {
  const failed = lags.errors ? `; ${lags.errors}/${lags.sessions} sessions failed` : '';
  const sessions = `${lags.sessions} session${lags.sessions === 1 ? '' : 's'}`;
  const fresh = lagText(lags.nonFinal, 'words');
  const revisions = lagText(lags.nonFinalRevisions, 'tokens');
  const after = lagText(lags.finalAfterEndpoint, 'tokens');
  const asSent = lagText(lags.final);
  return [
    {
      benchmark: `token lag, ${label}, non-final: new words (arrival − audio time of the word's end; ${sessions}); every revision counted`,
      result: `${fresh.text}; every revision: ${revisions.text}${failed}`,
      target: 'new words p95 ≤ 300 ms',
      met: !lags.errors && fresh.p95 <= 300,
    },
    {
      benchmark: `token lag, ${label}, final: from the endpoint (utterance's last word end + 600 ms pause); as sent (incl. the rest of the utterance and the pause)`,
      result: `from the endpoint ${after.text}; as sent ${asSent.text}${failed}`,
      target: 'p95 ≤ 1 s after the endpoint',
      met: !lags.errors && after.p95 <= 1000,
    },
  ];
}
