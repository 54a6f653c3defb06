// Conformance with the official Node SDK (@soniox/node) for cloned voices (docs/wire-compat.md, "REST conventions")
// (create → poll get until isReady → list/count → recompute({model}) → delete; duplicate-name create), plus
// using the voice in tts.generate and in a realtime TTS stream. A real server in the soniox-sdk profile.
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SonioxHttpError, SonioxNodeClient } from '@soniox/node';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';
import { probeAudio } from './tts-helpers.js';

let s: Parlance;
let client: SonioxNodeClient;
let work: string;
let clip: Buffer;
const RT = { model: 'tts-rt-v2', language: 'en' } as const;

beforeAll(async () => {
  (globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;
  work = tempDir('parlance-sdk-voices-');
  const env = {
    PARLANCE_COMPAT: 'soniox-sdk',
    PARLANCE_TTS_MODELS: 'parlance-tts-espeak-v1',
    PARLANCE_VOICE_PROFILE_CACHE_DIR: path.join(tmpdir(), 'parlance-test-voice-profiles'),
  };
  const [server, file] = await Promise.all([
    startParlance({ env }),
    makeSpeech(path.join(work, 'reference.wav'), 'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background.', { voice: 'rms' }),
  ]);
  s = server;
  clip = readFileSync(file);
  client = new SonioxNodeClient({
    api_key: s.apiKey,
    base_url: s.url,
    tts_api_url: s.url,
    realtime: {
      ws_base_url: `${s.url.replace('http', 'ws')}/transcribe-websocket`,
      tts_ws_url: `${s.url.replace('http', 'ws')}/tts-websocket`,
    },
  });
});
afterAll(async () => {
  await s?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

describe('@soniox/node cloned voices against Parlance', () => {
  it('create → poll get until ready → list/count → recompute → generate and realtime → delete; duplicate name is 409', async () => {
    const voice = await client.tts.voices.create({ name: 'SDK narrator', file: clip, filename: 'narrator.wav' });
    expect(voice.name).toBe('SDK narrator');
    expect(voice.filename).toBe('narrator.wav');
    expect(voice.isReady('tts-rt-v2')).toBe(false);
    expect(voice.models.find((m) => m.model === 'tts-rt-v2')?.status).toBe('processing');

    const ready = await waitFor(
      () => client.tts.voices.get(voice.id),
      (v) => v?.isReady('tts-rt-v2') === true,
      120_000,
      500,
    );
    expect(ready!.id).toBe(voice.id);

    const dup = await client.tts.voices.create({ name: 'SDK narrator', file: clip }).catch((e: unknown) => e);
    expect(dup).toBeInstanceOf(SonioxHttpError);
    expect((dup as SonioxHttpError).statusCode).toBe(409);
    expect((dup as SonioxHttpError).bodyText).toContain('voice_name_conflict');

    const list = await client.tts.voices.list();
    expect(list.voices.map((v) => v.id)).toEqual([voice.id]);
    expect(list.next_page_cursor).toBeNull();
    const ids: string[] = [];
    for await (const v of await client.tts.voices.list({ limit: 1 })) ids.push(v.id);
    expect(ids).toEqual([voice.id]);
    expect(await client.tts.voices.count()).toMatchObject({ total: 1 });

    // A ready voice stays ready: recompute only prepares models it is not_computed for.
    const recomputed = await client.tts.voices.recompute(voice.id, { model: 'tts-rt-v2' });
    expect(recomputed.isReady('tts-rt-v2')).toBe(true);
    expect((await ready!.recompute()).isReady('tts-rt-v2')).toBe(true);

    const wav = Buffer.from(await client.tts.generate({ text: 'Spoken by a cloned voice.', voice: voice.id }));
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect((await probeAudio(wav, 'wav', 0)).seconds).toBeGreaterThan(0.8);

    const stream = await client.realtime.tts({ ...RT, voice: voice.id, audio_format: 'pcm_s16le', sample_rate: 16000 });
    const audio = collect(stream);
    stream.sendText('A cloned voice in a realtime stream.', { end: true });
    expect((await audio).length / 2 / 16000).toBeGreaterThan(1);
    stream.close();

    await client.tts.voices.delete(voice.id);
    expect(await client.tts.voices.get(voice.id)).toBeNull();
    await client.tts.voices.delete(voice.id); // 404 is swallowed by the SDK
    expect(await client.tts.voices.count()).toMatchObject({ total: 0 });
    const gone = await client.tts.generate({ text: 'Gone.', voice: voice.id }).catch((e: unknown) => e);
    expect((gone as SonioxHttpError).statusCode).toBe(404);
  }, 180_000);
});
