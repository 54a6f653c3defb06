// Wyoming streaming synthesis (Home Assistant 2025.7+ sends an LLM's reply as it is written) against a real server and
// real espeak-ng, with the protocol client of wyoming-helpers.ts. The expected shapes are the wyoming package's
// (wyoming/tts.py, audio.py, error.py, info.py):
//   → synthesize-start {voice?: {name, speaker?} | {language}}, synthesize-chunk {text}*, synthesize {text, voice?}
//     (sent for servers that do not stream), synthesize-stop
//   ← per sentence: audio-start {rate, width, channels}, audio-chunk {rate, width, channels} + PCM payload, audio-stop;
//     then synthesize-stopped (no data); a failure: error {text, code}
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, waitFor, type Parlance } from '../harness.js';
import { type Blocks, blocks, freePort, ttsActive, WyomingClient } from './wyoming-helpers.js';

let s: Parlance;
let port: number;
let voice: string;
const testStart = new Date(Date.now() - 60_000).toISOString();

beforeAll(async () => {
  port = await freePort();
  s = await startParlance({ env: { PARLANCE_WYOMING_PORT: String(port) } });
  const c = await WyomingClient.open(port);
  c.write('describe');
  const info = await c.read();
  c.close();
  voice = (info.data.tts as { voices: { name: string; languages: string[] }[] }[])[0]!.voices.find((v) => v.languages.includes('en'))!.name;
}, 120_000);

afterAll(async () => s?.stop());

/** The sentences of a reply, and the reply cut into pieces of 1 to 12 characters, as an LLM writes it. */
function reply(minChars: number): { text: string; sentences: number; pieces: string[] } {
  const said = [
    'The living room lights are now off, and the thermostat is set to twenty one degrees for the night.',
    'Tomorrow will be mostly sunny with a light breeze from the west, and the high will reach about eighteen degrees.',
    'Your calendar shows a dentist appointment at ten in the morning, followed by lunch with Sam at half past twelve.',
    'I have also added milk, eggs and fresh bread to your shopping list, as you asked earlier today.',
    'The front door is locked, the garage door is closed, and the sprinklers will run at six tomorrow morning.',
  ];
  const sentences: string[] = [];
  while (sentences.join(' ').length < minChars) sentences.push(said[sentences.length % said.length]!);
  const text = sentences.join(' ');
  const pieces: string[] = [];
  const sizes = [3, 7, 1, 12, 5, 9, 2, 11];
  for (let i = 0, k = 0; i < text.length; k++) {
    pieces.push(text.slice(i, i + sizes[k % sizes.length]!));
    i += sizes[k % sizes.length]!;
  }
  return { text, sentences: sentences.length, pieces };
}

const seconds = (b: Blocks) => b.pcm.reduce((n, p) => n + p.length, 0) / (b.rate * 2);

async function plain(c: WyomingClient, text: string): Promise<Blocks> {
  c.write('synthesize', { text, voice: { name: voice } });
  const b = blocks(await c.readUntil('audio-stop', 'error'));
  expect(b.others).toEqual([]);
  expect(b.pcm).toHaveLength(1);
  return b;
}

interface UsageLog {
  request_id: string;
  model: string;
  output_audio_duration_ms: number;
}
const ttsLogs = async (): Promise<UsageLog[]> => {
  const q = `start_time=${encodeURIComponent(testStart)}&end_time=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}&limit=1000`;
  const res = await s.request(`/v1/usage-logs?${q}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { usage_logs: UsageLog[] }).usage_logs.filter((l) => l.output_audio_duration_ms > 0);
};

describe('Wyoming streaming synthesis', () => {
  it('info advertises it: supports_synthesize_streaming on the tts program', async () => {
    const c = await WyomingClient.open(port);
    c.write('describe');
    const info = await c.read();
    c.close();
    const tts = info.data.tts as Record<string, unknown>[];
    expect(tts).toHaveLength(1);
    expect(tts[0]).toMatchObject({ name: 'parlance', installed: true, supports_synthesize_streaming: true });
  });

  it("speaks each sentence as soon as its text is complete, a sentence split across chunks whole, and ignores the stream's synthesize copy", async () => {
    const c = await WyomingClient.open(port);
    c.write('synthesize-start', { voice: { name: voice } });
    c.write('synthesize-chunk', { text: 'The kitchen lights are on. ' });
    // The first sentence is spoken while the rest of the reply is not written yet.
    const first = blocks(await c.readUntil('audio-stop', 'error'));
    expect(first.others).toEqual([]);
    expect(first.pcm).toHaveLength(1);
    c.write('synthesize-chunk', { text: 'The front do' });
    c.write('synthesize-chunk', { text: 'or is locked' });
    c.write('synthesize-chunk', { text: '. And the gar' });
    c.write('synthesize-chunk', { text: 'age is closed.' });
    // Home Assistant sends the whole text again for servers that do not stream: not spoken twice.
    c.write('synthesize', {
      text: 'The kitchen lights are on. The front door is locked. And the garage is closed.',
      voice: { name: voice },
    });
    c.write('synthesize-stop');
    const rest = blocks(await c.readUntil('synthesize-stopped', 'error'));
    expect(rest.others).toEqual([{ type: 'synthesize-stopped', data: {} }]);
    expect(rest.pcm).toHaveLength(2);
    expect(rest.rate).toBe(first.rate);
    // Each block is its sentence, as the plain synthesize speaks it.
    const alone = [await plain(c, 'The kitchen lights are on.'), await plain(c, 'The front door is locked.'), await plain(c, 'And the garage is closed.')];
    const blocksSeconds = [first.pcm[0]!, ...rest.pcm].map((p) => p.length / (first.rate * 2));
    for (const [i, b] of alone.entries()) expect(Math.abs(blocksSeconds[i]! - seconds(b))).toBeLessThan(0.05 * seconds(b));
    // The connection goes on.
    c.write('ping', { text: 'after' });
    expect(await c.read()).toMatchObject({ type: 'pong', data: { text: 'after' } });
    c.close();
  });

  it('a 2,000-character reply in many chunks is spoken whole, one block per sentence, and metered once', async () => {
    const { text, sentences, pieces } = reply(2000);
    expect(text.length).toBeGreaterThanOrEqual(2000);
    const logsBefore = await ttsLogs();
    const c = await WyomingClient.open(port);
    c.write('synthesize-start', { voice: { name: voice } });
    for (const piece of pieces) c.write('synthesize-chunk', { text: piece });
    c.write('synthesize', { text, voice: { name: voice } });
    c.write('synthesize-stop');
    const streamed = blocks(await c.readUntil('synthesize-stopped', 'error'));
    expect(streamed.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
    expect(streamed.pcm).toHaveLength(sentences);
    // Metered once, for all of it.
    const logs = await waitFor(ttsLogs, (l) => l.length > logsBefore.length, 20_000);
    expect(logs).toHaveLength(logsBefore.length + 1);
    const record = logs.find((l) => !logsBefore.some((b) => b.request_id === l.request_id))!;
    expect(Math.abs(record.output_audio_duration_ms - seconds(streamed) * 1000)).toBeLessThan(5);
    // The same text in one synthesize: as long (the text was not cut), well under the audio cap.
    const whole = await plain(c, text);
    expect(Math.abs(seconds(streamed) - seconds(whole))).toBeLessThan(0.02 * seconds(whole));
    expect(seconds(streamed)).toBeLessThan(120);
    c.close();
  }, 180_000);

  it('a reply over the audio cap: spoken up to the cap, then max_audio_duration_reached, then synthesize-stopped', async () => {
    const { pieces } = reply(3000);
    const c = await WyomingClient.open(port);
    c.write('synthesize-start', { voice: { name: voice } });
    for (const piece of pieces) c.write('synthesize-chunk', { text: piece });
    c.write('synthesize-stop');
    const b = blocks(await c.readUntil('synthesize-stopped'));
    expect(b.others.map((e) => [e.type, e.data.code])).toEqual([
      ['error', 'max_audio_duration_reached'],
      ['synthesize-stopped', undefined],
    ]);
    // PARLANCE_TTS_MAX_AUDIO_SECONDS (120 s by default), to the sample.
    expect(b.pcm.reduce((n, p) => n + p.length, 0)).toBe(120 * b.rate * 2);
    c.close();
  }, 180_000);

  it('events out of order get an error event and the connection goes on', async () => {
    const c = await WyomingClient.open(port);
    const errorOf = async (type: string, data?: Record<string, unknown>) => {
      c.write(type, data);
      const e = await c.read();
      expect(e.type).toBe('error');
      return e.data.code;
    };
    expect(await errorOf('synthesize-chunk', { text: 'Hello. ' })).toBe('invalid_stream_state');
    expect(await errorOf('synthesize-stop')).toBe('invalid_stream_state');
    // An empty stream: nothing to speak, just the end.
    c.write('synthesize-start', {});
    c.write('synthesize-stop');
    expect(await c.read()).toEqual({ type: 'synthesize-stopped', data: {} });
    expect(await errorOf('synthesize-chunk', { text: 'After the stop. ' })).toBe('invalid_stream_state');
    // A second start while one is under way is refused; the first goes on.
    c.write('synthesize-start', { voice: { name: voice } });
    expect(await errorOf('synthesize-start', { voice: { name: voice } })).toBe('invalid_stream_state');
    c.write('synthesize-chunk', { text: 'Still here.' });
    c.write('synthesize-stop');
    const b = blocks(await c.readUntil('synthesize-stopped', 'error'));
    expect(b.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
    expect(b.pcm).toHaveLength(1);
    c.write('ping');
    expect((await c.read()).type).toBe('pong');
    c.close();
  });

  it('a stream refused or failed: one error event, its later text dropped, synthesize-stopped at its stop', async () => {
    const c = await WyomingClient.open(port);
    const failed = async (start: Record<string, unknown>, chunks: unknown[], code: string) => {
      c.write('synthesize-start', start);
      for (const text of chunks) c.write('synthesize-chunk', { text });
      c.write('synthesize', { text: 'The whole text.' });
      c.write('synthesize-stop');
      // Audio made before the failure comes in whole blocks, before the error.
      const { others } = blocks(await c.readUntil('synthesize-stopped'));
      expect(others.map((e) => [e.type, e.data.code])).toEqual([
        ['error', code],
        ['synthesize-stopped', undefined],
      ]);
    };
    await failed({ voice: { name: 'no-such-voice' } }, ['Hello. ', 'There.'], 'voice_not_found');
    await failed({ voice: { name: voice } }, [42, 'Hello.'], 'invalid_request');
    // PARLANCE_TTS_MAX_TEXT_CHARS (20,000 by default), the cap of a TTS WebSocket stream's text, in all.
    await failed({ voice: { name: voice } }, ['A first sentence, maybe spoken. ', 'x'.repeat(20_001), 'Hello.'], 'invalid_request');
    // The connection still serves.
    expect((await plain(c, 'Hello.')).pcm).toHaveLength(1);
    await waitFor(
      () => ttsActive(s),
      (n) => n === 0,
      20_000,
    );
    c.close();
  });

  it('a client that goes away mid-stream frees the synthesis slot, and what was made is metered once', async () => {
    const logsBefore = await ttsLogs();
    const c = await WyomingClient.open(port);
    c.write('synthesize-start', { voice: { name: voice } });
    c.write('synthesize-chunk', { text: 'The first sentence is spoken. ' });
    expect(blocks(await c.readUntil('audio-stop', 'error')).pcm).toHaveLength(1);
    expect(await ttsActive(s)).toBe(1);
    c.write('synthesize-chunk', { text: 'And then the client is gone' });
    c.close();
    await waitFor(
      () => ttsActive(s),
      (n) => n === 0,
      20_000,
    );
    const logs = await waitFor(ttsLogs, (l) => l.length > logsBefore.length, 20_000);
    expect(logs).toHaveLength(logsBefore.length + 1);
  });
});
