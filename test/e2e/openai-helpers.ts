// Shared by the OpenAI-compatible surface's and the transcript exports' test files: speech to transcribe, and
// Realtime sessions through the SDK's WebSocket clients.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS as BetaRealtimeWS } from 'openai/beta/realtime/ws';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { expect } from 'vitest';
import type WebSocket from 'ws';
import { buildConversation, wavBytes } from '../diarization-corpus.js';
import type { Parlance } from '../harness.js';

/** A WAV of flite's kal and slt voices taking four turns, with pauses a diarizer can split at. */
export function twoSpeakerWav(dir: string): string {
  const sentences = ['The birch canoe slid on the smooth planks.', 'Glue the sheet to the dark blue background.', 'Rice is often served in round bowls.'];
  const voice = (v: string) => ({
    name: v,
    source: 'flite',
    clips: sentences.map((text, i) => {
      const clip = path.join(dir, `${v}-${i}.wav`);
      execFileSync('flite', ['-voice', v, '-t', text, '-o', clip]);
      return clip;
    }),
  });
  const file = path.join(dir, 'two-speakers.wav');
  writeFileSync(file, wavBytes(buildConversation([voice('kal'), voice('slt')], { turns: 4, seed: 4, pauseMs: [900, 1200] }).pcm));
  return file;
}

/** A Realtime server event as received. */
export type Event = Record<string, unknown> & { type: string; event_id: string };

/** One Realtime connection's received events, and how to send, wait and close. */
export interface Conn {
  events: Event[];
  send(event: Record<string, unknown>): void;
  /** The first event (already received or coming) matching `pred`. */
  until(pred: (e: Event) => boolean, timeoutMs?: number): Promise<Event>;
  /** Resolves with the close code. */
  closed: Promise<number>;
  close(): void;
}

export function collect(socket: WebSocket, send: (e: Record<string, unknown>) => void, close: () => void): Conn {
  const events: Event[] = [];
  const waiters: { pred: (e: Event) => boolean; resolve: (e: Event) => void }[] = [];
  socket.on('message', (data, isBinary) => {
    expect(isBinary).toBe(false);
    const e = JSON.parse((data as Buffer).toString('utf8')) as Event;
    events.push(e);
    for (const w of [...waiters]) {
      if (!w.pred(e)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  return {
    events,
    send,
    closed,
    close,
    until(pred, timeoutMs = 60_000) {
      const hit = events.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise<Event>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching event in ${timeoutMs} ms; events: ${JSON.stringify(events.map((e) => e.type))}`)),
          timeoutMs,
        );
        waiters.push({ pred, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
  };
}

/**
 * A session through the SDK's realtime WebSocket client. The SDK always dials wss:// (buildRealtimeURL); the test
 * server speaks plain HTTP, so the client is handed a plain TCP connection to it (ws's createConnection option).
 */
export async function sdkSession(s: Parlance, key: string, opts: { beta?: boolean; model?: string } = {}): Promise<Conn & { errors: Error[] }> {
  const client = new OpenAI({ apiKey: key, baseURL: `${s.url}/v1`, maxRetries: 0 });
  const { hostname, port } = new URL(s.url);
  const options = { createConnection: () => net.connect({ host: hostname, port: Number(port) }) };
  const props = { model: opts.model ?? 'gpt-4o-transcribe', options };
  const errors: Error[] = [];
  let rt: OpenAIRealtimeWS | BetaRealtimeWS;
  if (opts.beta) {
    const beta = new BetaRealtimeWS(props, client);
    beta.on('error', (err) => errors.push(err));
    rt = beta;
  } else {
    const ga = new OpenAIRealtimeWS(props, client);
    ga.on('error', (err) => errors.push(err));
    rt = ga;
  }
  const conn = collect(
    rt.socket,
    (e) => rt.send(e as never),
    () => rt.close(),
  );
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  return { ...conn, errors };
}

/** Append `audio` in 100 ms events (at 24 kHz pcm16 unless `bytesPerMs` says otherwise), as fast as the socket takes them. */
export function appendAll(c: Conn, audio: Buffer, bytesPerMs = 48): void {
  const chunk = bytesPerMs * 100;
  for (let i = 0; i < audio.length; i += chunk) c.send({ type: 'input_audio_buffer.append', audio: audio.subarray(i, i + chunk).toString('base64') });
}

/** Exactly OpenAI's error event shape; returns its `error`. */
export function errorOf(e: Event): { type: string; code: string | null; message: string; param: string | null; event_id: string | null } {
  expect(e.type).toBe('error');
  expect(Object.keys(e).sort()).toEqual(['error', 'event_id', 'type']);
  expect(e.event_id).toMatch(/^event_\w+$/);
  const err = e.error as ReturnType<typeof errorOf>;
  expect(Object.keys(err).sort()).toEqual(['code', 'event_id', 'message', 'param', 'type']);
  expect(typeof err.message).toBe('string');
  return err;
}
