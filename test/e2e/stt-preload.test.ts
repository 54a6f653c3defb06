// Speech models load while the server starts (PARLANCE_STT_PRELOAD, on by default; the test harness turns it off for
// the other files): the model is loaded, and logged, before any request asked for it, and the first real-time
// session is served by it.
import path from 'node:path';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { makeSpeech, startParlance, tempDir, waitFor, type Parlance } from '../harness.js';

const work = tempDir('parlance-preload-');
let s: Parlance | undefined;
afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** One session: config, all of `pcm` at once, the end frame; its frames once finished (or failed). */
async function transcribeLive(
  server: Parlance,
  pcm: Buffer,
): Promise<{ tokens: { text: string; is_final: boolean }[]; finished?: boolean; error_type?: string }[]> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/transcribe-websocket`);
  const frames: { tokens: { text: string; is_final: boolean }[]; finished?: boolean; error_type?: string }[] = [];
  const done = new Promise<void>((resolve, reject) => {
    ws.on('message', (m) => {
      const f = JSON.parse(m.toString()) as (typeof frames)[number];
      frames.push(f);
      if (f.finished || f.error_type) resolve();
    });
    ws.on('error', reject);
  });
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ api_key: server.apiKey, model: 'stt-rt-v3', audio_format: 'auto' }));
  for (let off = 0; off < pcm.length; off += 8000) ws.send(pcm.subarray(off, off + 8000));
  ws.send('');
  await done;
  ws.close();
  return frames;
}

describe('speech model preload', () => {
  it('loads the speech model at start, before any request, and the first session uses it', async () => {
    s = await startParlance({ env: { PARLANCE_STT_PRELOAD: '1', PARLANCE_LOG_LEVEL: 'info', PARLANCE_REALTIME_WARM_DECODERS: '1' } });
    const server = s;
    // Nothing has asked for a model yet: the server loads it by itself.
    const logged = await waitFor(
      async () =>
        server
          .stderr()
          .split('\n')
          .filter((l) => l.includes('"speech model loaded"')),
      (lines) => lines.length > 0,
      60_000,
      50,
    );
    const line = JSON.parse(logged[0]!) as { model: string; ms: number };
    // Loaded before the server listened: whoever connects first finds it ready.
    expect(server.stderr().indexOf('"speech model loaded"')).toBeLessThan(server.stderr().indexOf('Server listening'));
    expect(line.model).toBe('parlance-en-pocketsphinx-v1');
    expect(line.ms).toBeGreaterThan(0);

    const wav = await makeSpeech(path.join(work, 'hello.wav'), 'hello world, this is the first session.');
    const frames = await transcribeLive(server, readFileSync(wav));
    expect(frames.find((f) => f.error_type)).toBeUndefined();
    const text = frames.flatMap((f) => f.tokens.filter((t) => t.is_final).map((t) => t.text)).join('');
    expect(text).toMatch(/hello/i);
  }, 120_000);

  it('a cold start is not a busy server: the first session waits for the model and its decoder whatever the audio timeout', async () => {
    // No preload, and an audio timeout far shorter than loading the model and a decoder: the first session pays the
    // load, but neither as request_timeout nor as limit_exceeded ("every recognizer is busy").
    const cold = await startParlance({ env: { PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS: '0.2', PARLANCE_REALTIME_WARM_DECODERS: '2' } });
    try {
      const wav = await makeSpeech(path.join(work, 'cold.wav'), 'the first words after a cold start.');
      const pcm = readFileSync(wav);
      const [first, second] = await Promise.all([transcribeLive(cold, pcm), transcribeLive(cold, pcm)]);
      for (const frames of [first, second]) {
        expect(frames.find((f) => f.error_type)).toBeUndefined();
        expect(frames.at(-1)?.finished).toBe(true);
        expect(frames.flatMap((f) => f.tokens.filter((t) => t.is_final)).length).toBeGreaterThan(2);
      }
    } finally {
      await cold.stop();
    }
  }, 120_000);
});
