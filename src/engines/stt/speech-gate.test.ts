// The live speech gate with the real Silero VAD on flite speech over a noise floor.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeToBuffer } from '../../audio/decode.js';
import { loadVad, type Vad } from '../../audio/vad.js';
import { SpeechGate, type GateEvent, type SpeechGateOptions } from './speech-gate.js';

const run = promisify(execFile);
const BYTES_PER_MS = 32;

let dir: string;
let vad: Vad;
let first: Buffer;
let second: Buffer;

/** Faint noise (about -60 dBFS), so non-speech is not digital silence. */
function noise(ms: number, seed = 7): Buffer {
  const out = Buffer.alloc(ms * BYTES_PER_MS);
  let x = seed;
  for (let i = 0; i < out.length; i += 2) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out.writeInt16LE(Math.round(((x / 0x7fffffff) * 2 - 1) * 50), i);
  }
  return out;
}

/** Mix faint noise under speech too. */
function withNoise(speech: Buffer): Buffer {
  const n = noise(Math.ceil(speech.length / BYTES_PER_MS), 11);
  const out = Buffer.alloc(speech.length);
  for (let i = 0; i + 1 < speech.length; i += 2) out.writeInt16LE(Math.max(-32768, Math.min(32767, speech.readInt16LE(i) + n.readInt16LE(i))), i);
  return out;
}

/** Noise 1 s, first sentence, noise `pauseMs`, second sentence, noise 1.5 s; and where each sentence is (samples). */
function conversation(pauseMs: number): { pcm: Buffer; spans: [number, number][] } {
  const parts = [noise(1000), withNoise(first), noise(pauseMs, 3), withNoise(second), noise(1500, 5)];
  const a = 1000 * 16;
  const b = a + first.length / 2 + pauseMs * 16;
  return {
    pcm: Buffer.concat(parts),
    spans: [
      [a, a + first.length / 2],
      [b, b + second.length / 2],
    ],
  };
}

async function gate(pcm: Buffer, options: SpeechGateOptions = {}, chunkBytes = 640): Promise<{ events: GateEvent[]; g: SpeechGate }> {
  const g = new SpeechGate(vad.createStream(), options);
  const events: GateEvent[] = [];
  for (let off = 0; off < pcm.length; off += chunkBytes) events.push(...(await g.push(pcm.subarray(off, off + chunkBytes))));
  events.push(...(await g.flush()));
  return { events, g };
}

interface Utterance {
  start: number;
  end: number;
  /** Undefined: still open. */
  reason?: string;
  /** A cut's pause was an endpoint after all (or not). */
  endpoint?: boolean;
}

/** Utterances as the decoder sees them. */
function utterances(events: GateEvent[]): Utterance[] {
  const out: Utterance[] = [];
  let open: Utterance | undefined;
  for (const e of events) {
    if (e.type === 'after_cut') {
      // Decides the pause after the last utterance, which was cut, before any audio of another.
      expect(open).toBeUndefined();
      expect(out.at(-1)?.reason).toBe('cut');
      expect(out.at(-1)?.endpoint).toBeUndefined();
      out.at(-1)!.endpoint = e.endpoint;
      continue;
    }
    if (e.type === 'audio') {
      if (!open) out.push((open = { start: e.startSample, end: e.startSample }));
      expect(e.startSample).toBe(open.end); // contiguous within an utterance
      open.end = e.startSample + e.samples.length;
    } else if (e.type === 'hold') {
      // Holding starts at the end of what the decoder has: the utterance would end there.
      expect(open).toBeDefined();
      expect(e.sample).toBe(open!.end);
    } else {
      expect(open).toBeDefined();
      expect(e.sample).toBe(open!.end);
      open!.reason = e.reason;
      open = undefined;
    }
  }
  return out;
}

/** The audio events are exact slices of the input. */
function expectExact(events: GateEvent[], pcm: Buffer): void {
  for (const e of events) {
    if (e.type !== 'audio') continue;
    const original = pcm.subarray(e.startSample * 2, (e.startSample + e.samples.length) * 2);
    expect(Buffer.compare(Buffer.from(e.samples.buffer, e.samples.byteOffset, e.samples.byteLength), original)).toBe(0);
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parlance-gate-'));
  vad = await loadVad();
  expect(vad.backend).toBe('silero');
  const say = async (voice: string, text: string, name: string) => {
    const wav = join(dir, `${name}.wav`);
    await run('flite', ['-voice', voice, '-t', text, '-o', wav]);
    return decodeToBuffer(wav);
  };
  first = await say('slt', 'the quick brown fox jumps over the lazy dog', 'a');
  second = await say('rms', 'we will meet at the station at nine in the morning', 'b');
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('speech gate', () => {
  it('hands out only the speech, with a pre-roll and the start of the pause, and ends each utterance at a pause', async () => {
    const { pcm, spans } = conversation(2000);
    const { events, g } = await gate(pcm, { endpointMs: 600, preRollMs: 300, tailMs: 300 });
    expectExact(events, pcm);
    const utts = utterances(events);
    expect(utts).toHaveLength(2);
    for (const [i, u] of utts.entries()) {
      const [start, end] = spans[i]!;
      expect(u.reason).toBe('pause');
      // Opens with up to 300 ms (+ one 32 ms frame) before the speech, no later than 100 ms into it.
      expect(u.start).toBeGreaterThanOrEqual(start - (300 + 32 + 100) * 16);
      expect(u.start).toBeLessThanOrEqual(start + 100 * 16);
      // The decoder hears the first 300 ms of the pause (+ the VAD's frames of hangover), not the rest of it.
      expect(u.end).toBeGreaterThanOrEqual(end);
      expect(u.end).toBeLessThanOrEqual(end + (300 + 300) * 16);
    }
    // The leading noise, most of the 2 s pause and the trailing noise were never decoded.
    const { receivedSamples, decodedSamples, utterances: opened } = g.stats;
    expect(receivedSamples).toBe(pcm.length / 2);
    expect(opened).toBe(2);
    const speech = spans.reduce((n, [a, b]) => n + b - a, 0);
    expect(decodedSamples).toBeLessThan(speech + 2 * (300 + 300 + 300) * 16);
    expect(receivedSamples - decodedSamples).toBeGreaterThan(3000 * 16);
  });

  it('keeps a short pause inside the utterance, handing out the part of it that was held back', async () => {
    // flite leaves some quiet around each sentence, so the VAD's pause is longer than the gap between the clips.
    for (const tailMs of [300, 32]) {
      // 32 ms: the decoder hears only one frame of any pause before the rest is held back.
      const { pcm, spans } = conversation(250);
      const { events } = await gate(pcm, { endpointMs: 600, tailMs });
      expectExact(events, pcm);
      const utts = utterances(events); // also checks that the utterance's audio is contiguous
      expect(utts).toHaveLength(1);
      expect(utts[0]!.reason).toBe('pause');
      expect(utts[0]!.start).toBeLessThanOrEqual(spans[0]![0]);
      expect(utts[0]!.end).toBeGreaterThan((spans[1]![0] + spans[1]![1]) / 2); // the second sentence is in it
    }
  });

  it('ends an old enough utterance at a short pause (a cut, not an endpoint), and a young one not', async () => {
    const { pcm, spans } = conversation(250);
    const firstMs = (spans[0]![1] - spans[0]![0]) / 16;
    // Old enough by the pause: cut there, between the sentences; the second opens its own utterance.
    const cut = utterances((await gate(pcm, { endpointMs: 600, cutAtPause: { afterMs: firstMs / 2, pauseMs: 100 } })).events);
    // The second sentence is old enough at its own end: cut there too, and its pause then turns out an endpoint.
    expect(cut.map((u) => [u.reason, u.endpoint])).toEqual([
      ['cut', false],
      ['cut', true],
    ]);
    expect(cut[0]!.end).toBeGreaterThan((spans[0]![0] + spans[0]![1]) / 2);
    expect(cut[0]!.end).toBeLessThanOrEqual(spans[1]![0]);
    expect(cut[1]!.start).toBeGreaterThanOrEqual(cut[0]!.end);
    expect(cut[1]!.start).toBeLessThanOrEqual(spans[1]![0]);
    // Not old enough at the first pause, old enough at the end: one utterance, cut at its end, an endpoint after all.
    const young = utterances((await gate(pcm, { endpointMs: 600, cutAtPause: { afterMs: firstMs + 1000, pauseMs: 100 } })).events);
    expect(young.map((u) => [u.reason, u.endpoint])).toEqual([['cut', true]]);
    expect(young[0]!.end).toBeGreaterThan((spans[1]![0] + spans[1]![1]) / 2); // the second sentence is in it
    // A pause between the sentences shorter than asked for does not cut.
    const long = utterances((await gate(pcm, { endpointMs: 600, cutAtPause: { afterMs: firstMs / 2, pauseMs: 550 } })).events);
    expect(long.map((u) => [u.reason, u.endpoint])).toEqual([['cut', true]]);
  });

  it('gives the same utterances whatever the chunking', async () => {
    const { pcm } = conversation(1200);
    const reference = utterances((await gate(pcm, {}, 640)).events);
    for (const chunk of [1, 333, 16_001, pcm.length]) {
      const { events } = await gate(pcm, {}, chunk);
      expectExact(events, pcm);
      expect(utterances(events)).toEqual(reference);
    }
  });

  it('never ends an utterance at a pause when endpoints are disabled, and cuts at the maximum length', async () => {
    const { pcm } = conversation(2000);
    const open = utterances((await gate(pcm, { endpointMs: 0 })).events);
    expect(open).toHaveLength(1);
    expect(open[0]!.reason).toBeUndefined(); // closed only by finalize() or the end of the stream
    const cut = utterances((await gate(pcm, { endpointMs: 0, maxUtteranceMs: 2000 })).events);
    expect(cut.length).toBeGreaterThanOrEqual(3);
    for (const u of cut.slice(0, -1)) {
      expect(u.reason).toBe('max_length');
      expect(u.end - u.start).toBeLessThanOrEqual((2000 + 32) * 16);
    }
    // A cut leaves no gap: the next utterance starts where the last one ended.
    for (let i = 1; i < cut.length; i++) expect(cut[i]!.start).toBe(cut[i - 1]!.end);
  });

  it('hands out nothing for noise alone', async () => {
    const { events, g } = await gate(noise(5000));
    expect(events).toEqual([]);
    expect(g.stats).toEqual({ receivedSamples: 5000 * 16, decodedSamples: 0, utterances: 0 });
  });

  it('after finalize(), opens a new utterance without handing out audio twice', async () => {
    const { pcm } = conversation(2000);
    const g = new SpeechGate(vad.createStream());
    const events: GateEvent[] = [];
    const half = Math.floor((16_000 + first.length / 2 / 2) * 2); // in the middle of the first sentence
    events.push(...(await g.push(pcm.subarray(0, half))));
    expect(events.some((e) => e.type === 'audio')).toBe(true);
    g.finalize();
    const before = events.length;
    for (let off = half; off < pcm.length; off += 640) events.push(...(await g.push(pcm.subarray(off, off + 640))));
    expectExact(events, pcm);
    // The audio after finalize continues exactly where the first utterance's stopped.
    const lastBefore = events
      .slice(0, before)
      .filter((e) => e.type === 'audio')
      .at(-1) as Extract<GateEvent, { type: 'audio' }>;
    const firstAfter = events.slice(before).find((e) => e.type === 'audio') as Extract<GateEvent, { type: 'audio' }>;
    expect(firstAfter.startSample).toBe(lastBefore.startSample + lastBefore.samples.length);
    let covered = 0;
    for (const e of events) {
      if (e.type !== 'audio') continue;
      expect(e.startSample).toBeGreaterThanOrEqual(covered); // no sample handed out twice
      covered = e.startSample + e.samples.length;
    }
  });
});
