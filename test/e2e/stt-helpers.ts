// Real-time transcription sessions for the tests that count them (concurrency caps, several nodes).
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { SttReceivedFrame } from '../../src/wire/stt-frames.js';

export interface Session {
  frames: SttReceivedFrame[];
  /** The first frame (an error frame when the session was refused). */
  first: Promise<SttReceivedFrame>;
  closed: Promise<number>;
  stop(): void;
}

/** A real-time session that holds its slot: config, a little silence, then keepalives until stopped. */
export async function holdStt(url: string, apiKey: string): Promise<Session> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: SttReceivedFrame[] = [];
  const first = new Promise<SttReceivedFrame>((resolve) =>
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as SttReceivedFrame;
      frames.push(f);
      resolve(f);
    }),
  );
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(JSON.stringify({ api_key: apiKey, model: 'stt-rt-v4', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
  ws.send(Buffer.alloc(3200));
  const timer = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: 'keepalive' })), 1000);
  void closed.then(() => clearInterval(timer));
  return {
    frames,
    first,
    closed,
    stop() {
      clearInterval(timer);
      ws.terminate();
    },
  };
}

export async function expectRefused(s: Session, message: RegExp): Promise<void> {
  const f = await s.first;
  expect(f).toMatchObject({ tokens: [], error_code: 429, error_type: 'limit_exceeded' });
  expect(f.error_message).toMatch(message);
  expect(await s.closed).toBe(1000);
}
