// Shared pieces of the TTS tests: decoding output with ffprobe/ffmpeg and a small /tts-websocket client that checks
// every frame against the wire's TtsServerFrame.
import { execFile } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Value } from '@sinclair/typebox/value';
import { WebSocket } from 'ws';
import { TtsServerFrame } from '../../src/wire/tts-frames.js';

const execFileP = promisify(execFile);

const RAW: Record<string, { f: string; bytes: number }> = {
  pcm_f32le: { f: 'f32le', bytes: 4 },
  pcm_s16le: { f: 's16le', bytes: 2 },
  pcm_s16be: { f: 's16be', bytes: 2 },
  pcm_mulaw: { f: 'mulaw', bytes: 1 },
  pcm_alaw: { f: 'alaw', bytes: 1 },
};

/** Decode audio bytes of `format` (raw PCM needs `rate`): the stream's sample rate and its duration in seconds. */
export async function probeAudio(bytes: Buffer, format: string, rate: number): Promise<{ sampleRate: number; seconds: number; codec: string }> {
  const file = path.join(tmpdir(), `tts-${randomBytes(6).toString('hex')}.${format}`);
  writeFileSync(file, bytes);
  try {
    const input = RAW[format] ? ['-f', RAW[format].f, '-ar', String(rate), '-ac', '1', '-i', file] : ['-i', file];
    const { stdout } = await execFileP('ffprobe', [
      '-v',
      'error',
      ...input.slice(0, -2),
      file,
      '-show_entries',
      'stream=sample_rate,codec_name',
      '-of',
      'json',
    ]);
    const st = (JSON.parse(stdout) as { streams: { sample_rate: string; codec_name: string }[] }).streams[0]!;
    // Decode fully to count samples: streamed containers (flac, wav to a pipe) may carry no duration.
    const dec = await execFileP('ffmpeg', ['-v', 'error', ...input, '-f', 's16le', '-ac', '1', '-ar', st.sample_rate, 'pipe:1'], {
      encoding: 'buffer',
      maxBuffer: 256 * 1024 * 1024,
    });
    const samples = (dec.stdout as Buffer).length / 2;
    return { sampleRate: Number(st.sample_rate), seconds: samples / Number(st.sample_rate), codec: st.codec_name };
  } finally {
    rmSync(file, { force: true });
  }
}

export interface WsClient {
  ws: WebSocket;
  frames: Record<string, unknown>[];
  send(msg: unknown): void;
  /** Wait for a frame matching `pred` (searching frames already received too). */
  next(pred: (f: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number }>;
  close(): void;
}

export async function openTts(url: string, handshake: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<WsClient> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/tts-websocket`, handshake.protocols ?? [], { headers: handshake.headers });
  const frames: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  const binary: Buffer[] = [];
  const offSchema: unknown[] = [];
  ws.on('message', (data, isBinary) => {
    if (isBinary) binary.push(data as Buffer);
    else {
      const frame = JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>;
      // Every frame the server sends is one of the declared server frames (src/wire/tts-frames.ts).
      if (!Value.Check(TtsServerFrame, frame)) offSchema.push(frame);
      frames.push(frame);
    }
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number }>((resolve) =>
    ws.on('close', (code) => {
      resolve({ code });
      for (const w of waiters.splice(0)) w();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    closed,
    send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
    close: () => ws.close(),
    async next(pred, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let seen = 0;
      for (;;) {
        if (binary.length) throw new Error('server sent a binary frame');
        if (offSchema.length) throw new Error(`server sent a frame outside TtsServerFrame: ${JSON.stringify(offSchema[0]).slice(0, 500)}`);
        for (; seen < frames.length; seen++) if (pred(frames[seen]!)) return frames[seen]!;
        const left = deadline - Date.now();
        if (left <= 0 || ws.readyState === ws.CLOSED) throw new Error(`no matching frame; got ${JSON.stringify(frames).slice(0, 2000)}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
    },
  };
}

/** All audio of one stream, decoded from base64, once it terminated. */
export function streamAudio(frames: Record<string, unknown>[], id: string): Buffer {
  return Buffer.concat(frames.filter((f) => f.stream_id === id && typeof f.audio === 'string').map((f) => Buffer.from(f.audio as string, 'base64')));
}

export function startMsg(apiKey: string, streamId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { api_key: apiKey, model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'pcm_s16le', sample_rate: 16000, stream_id: streamId, ...extra };
}
