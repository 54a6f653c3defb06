// Wyoming streaming synthesis of an SSML reply (an LLM agent that writes <speak> documents) against a real server and
// real engines (espeak-ng reading the markup itself, flite through the translator): the document arrives in pieces cut
// anywhere, inside tags too, and is spoken once whole, its breaks measured in the returned PCM; an invalid document
// is one `error` event naming the position, and the connection serves the next stream. The protocol client and the
// audio-block checks are wyoming-helpers.ts's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startParlance, waitFor, type Parlance } from '../harness.js';
import { type Blocks, blocks, freePort, ttsActive, WyomingClient } from './wyoming-helpers.js';

/** Samples quieter than this count as silence (about -38 dBFS), as in tts-ssml.test.ts. */
const QUIET = 400;

let s: Parlance;
let port: number;
const testStart = new Date(Date.now() - 60_000).toISOString();

beforeAll(async () => {
  port = await freePort();
  s = await startParlance({ env: { PARLANCE_WYOMING_PORT: String(port) } });
}, 120_000);

afterAll(async () => s?.stop());

const ENGINES = [
  { name: 'espeak-ng (native SSML)', voice: 'parlance-tts-espeak-v1/Adrian' },
  { name: 'flite (translator)', voice: 'parlance-tts-flite-v1/Adrian' },
];

const DOC =
  '  <speak>The kitchen lights are on. <break time="700ms"/> The front door is <prosody rate="slow">locked</prosody>, ' +
  'and the alarm code ends in <say-as interpret-as="digits">42</say-as>. <sub alias="Home Assistant">HA</sub> is ready.</speak>';

/** `text` cut into pieces of 1 to 12 characters, as an LLM writes it: across tags, attributes and entities. */
function pieces(text: string): string[] {
  const sizes = [3, 7, 1, 12, 5, 9, 2, 11];
  const out: string[] = [];
  for (let i = 0, k = 0; i < text.length; i += sizes[k++ % sizes.length]!) out.push(text.slice(i, i + sizes[k % sizes.length]!));
  return out;
}

/** The longest run of near-silent samples across all the blocks, in seconds. */
function longestSilence(b: Blocks): number {
  const pcm = Buffer.concat(b.pcm);
  let best = 0;
  let run = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    run = Math.abs(pcm.readInt16LE(i)) < QUIET ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best / b.rate;
}

const seconds = (b: Blocks) => b.pcm.reduce((n, p) => n + p.length, 0) / (b.rate * 2);

interface UsageLog {
  request_id: string;
  output_audio_duration_ms: number;
}
const ttsLogs = async (): Promise<UsageLog[]> => {
  const q = `start_time=${encodeURIComponent(testStart)}&end_time=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}&limit=1000`;
  const res = await s.request(`/v1/usage-logs?${q}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { usage_logs: UsageLog[] }).usage_logs.filter((l) => l.output_audio_duration_ms > 0);
};

/** A streamed synthesis of `chunks`, answered up to synthesize-stopped. */
async function stream(c: WyomingClient, start: Record<string, unknown>, chunks: unknown[]): Promise<Blocks> {
  c.write('synthesize-start', start);
  for (const text of chunks) c.write('synthesize-chunk', { text });
  c.write('synthesize-stop');
  return blocks(await c.readUntil('synthesize-stopped'));
}

describe('Wyoming streaming synthesis of SSML', () => {
  for (const engine of ENGINES)
    it(`${engine.name}: a <speak> reply in small pieces is spoken as SSML, its 700 ms break 650–800 ms of silence, metered once`, async () => {
      const logsBefore = await ttsLogs();
      const c = await WyomingClient.open(port);
      c.write('synthesize-start', { voice: { name: engine.voice } });
      const chunks = pieces(DOC);
      // The first piece is "  <": not yet known to be SSML.
      expect(chunks[0]).toBe('  <');
      for (const text of chunks) c.write('synthesize-chunk', { text });
      // Home Assistant's copy of the whole text for servers that do not stream: not spoken again.
      c.write('synthesize', { text: DOC, voice: { name: engine.voice } });
      c.write('synthesize-stop');
      const streamed = blocks(await c.readUntil('synthesize-stopped', 'error'));
      expect(streamed.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
      // Block by block: the sentences and the break's silence each in their own.
      expect(streamed.pcm.length).toBeGreaterThanOrEqual(3);
      const gap = longestSilence(streamed);
      expect(gap).toBeGreaterThanOrEqual(0.65);
      expect(gap).toBeLessThanOrEqual(0.8);
      // As long as the same document in one synthesize (the SSML path): no markup read out, nothing left out.
      c.write('synthesize', { text: DOC, voice: { name: engine.voice } });
      const whole = blocks(await c.readUntil('audio-stop', 'error'));
      expect(whole.others).toEqual([]);
      expect(Math.abs(seconds(streamed) - seconds(whole))).toBeLessThan(0.02 * seconds(whole));
      // Metered once: the stream and the synthesize are two records.
      const logs = await waitFor(ttsLogs, (l) => l.length >= logsBefore.length + 2, 20_000);
      expect(logs).toHaveLength(logsBefore.length + 2);
      const fresh = logs.filter((l) => !logsBefore.some((b) => b.request_id === l.request_id));
      expect(fresh.some((l) => Math.abs(l.output_audio_duration_ms - seconds(streamed) * 1000) < 5)).toBe(true);
      c.close();
    }, 60_000);

  it('a document is spoken once its </speak> arrives, before synthesize-stop', async () => {
    const c = await WyomingClient.open(port);
    c.write('synthesize-start', { voice: { name: ENGINES[0]!.voice } });
    for (const text of ['<speak>The lights ', 'are on.<break ti', 'me="300ms"/> Good night.</sp', 'eak>']) c.write('synthesize-chunk', { text });
    const first = blocks(await c.readUntil('audio-stop', 'error'));
    expect(first.others).toEqual([]);
    // Space after the document is fine.
    c.write('synthesize-chunk', { text: '\n' });
    c.write('synthesize-stop');
    const rest = blocks(await c.readUntil('synthesize-stopped', 'error'));
    expect(rest.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
    c.close();
  });

  it('invalid SSML: one error event naming the position, no audio; the connection serves the next stream', async () => {
    const c = await WyomingClient.open(port);
    const voice = { name: ENGINES[1]!.voice };
    // Unclosed <prosody>: its </speak> does not make the document whole, so the error comes at the stop.
    const bad = await stream(c, { voice }, pieces('<speak>Hello <prosody rate="fast">world</speak>'));
    expect(bad.pcm).toEqual([]);
    expect(bad.others.map((e) => [e.type, e.data.code])).toEqual([
      ['error', 'invalid_request'],
      ['synthesize-stopped', undefined],
    ]);
    expect(bad.others[0]!.data.text).toMatch(/not valid SSML at line 1, column 40: <\/speak> where <\/prosody> was expected/);
    // An unknown element on the second line.
    const unknown = await stream(c, { voice }, ['<speak>\nHello <foo/> there', '</speak>']);
    expect(unknown.others[0]!.data.text).toMatch(/line 2, column 7: unknown element <foo>/);
    // Text after a whole document: what was whole may have been spoken; then the error at the text's position.
    const after = await stream(c, { voice }, ['<speak>Hi there.</speak>', ' And more.']);
    expect(after.others.map((e) => [e.type, e.data.code])).toEqual([
      ['error', 'invalid_request'],
      ['synthesize-stopped', undefined],
    ]);
    expect(after.others[0]!.data.text).toMatch(/line 1, column 26: text after <\/speak>/);
    // A text_format that is neither: the start is refused.
    const refused = await stream(c, { voice, text_format: 'markdown' }, ['Hello.']);
    expect(refused.others.map((e) => [e.type, e.data.code])).toEqual([
      ['error', 'invalid_request'],
      ['synthesize-stopped', undefined],
    ]);
    // The same connection: an SSML stream, a plain one, and text_format "ssml" on a document after an XML declaration.
    const good = await stream(c, { voice }, pieces('<speak>Hello <break time="700ms"/> world</speak>'));
    expect(good.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
    expect(longestSilence(good)).toBeGreaterThanOrEqual(0.65);
    expect(longestSilence(good)).toBeLessThanOrEqual(0.8);
    const plain = await stream(c, { voice }, pieces('The door is locked. The lights are off.'));
    expect(plain.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
    expect(plain.pcm).toHaveLength(2);
    const declared = await stream(c, { voice, text_format: 'ssml' }, ['<?xml version="1.0"?>\n', '<speak>Good night.</speak>']);
    expect(declared.others.map((e) => e.type)).toEqual(['synthesize-stopped']);
    expect(declared.pcm.length).toBeGreaterThan(0);
    await waitFor(
      () => ttsActive(s),
      (n) => n === 0,
      20_000,
    );
    c.close();
  }, 60_000);
});
