// The embedding diarizer with a real sherpa-onnx model built at test time (test/fixtures/sherpa-models.ts: the
// embedding is the average spectrum): alternating tones of two pitches are two speakers at the right times, and two
// flite voices (kal, slt) in conversation are found with a low diarization error rate; a speaker-count hint bounds
// the speakers found in a conversation of real voices.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadVad, type Vad } from '../../audio/vad.js';
import { buildConversation, type CorpusSpeaker, realSpeakers } from '../../../test/diarization-corpus.js';
import { writeSpectrumEmbeddingModel } from '../../../test/fixtures/sherpa-models.js';
import { tempDir } from '../../../test/harness.js';
import { readManifest } from '../model-dir/manifest.js';
import type { SpeakerEmbedder } from '../speaker/engine.js';
import { SpeakerEmbeddingEngine } from '../speaker/engine.js';
import { diarizationErrorRate } from './der.js';
import { EmbeddingDiarizer } from './embedding-diarizer.js';
import { labelTokens } from './label-tokens.js';
import { SpeechWindowCutter } from './speech-windows.js';

let work: string;
let energy: Vad;
let silero: Vad;
let engine: SpeakerEmbeddingEngine;

beforeAll(async () => {
  work = tempDir('embedding-diarizer-');
  const dir = path.join(work, 'spectrum');
  writeSpectrumEmbeddingModel(dir);
  const manifest = { id: 'spectrum-v1', family: 'speaker-embedding', type: 'embedding', files: { model: 'model.onnx' }, languages: ['en'] };
  writeFileSync(path.join(dir, 'parlance-model.json'), JSON.stringify(manifest));
  engine = new SpeakerEmbeddingEngine(readManifest(dir));
  // Pure tones are not speech to Silero: the energy detector hears them.
  energy = await loadVad({ backend: 'energy' });
  silero = await loadVad({ log: () => {} });
}, 60_000);

afterAll(async () => {
  await engine?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Tone segments (Hz, ms) with silence between them, as PCM, and where each is. */
function tones(parts: { hz: number; ms: number }[], gapMs = 600): { pcm: Int16Array; spans: { startMs: number; endMs: number; hz: number }[] } {
  const total = parts.reduce((s, p) => s + p.ms + gapMs, gapMs);
  const pcm = new Int16Array(total * 16);
  const spans: { startMs: number; endMs: number; hz: number }[] = [];
  let at = gapMs;
  for (const p of parts) {
    for (let i = 0; i < p.ms * 16; i++) pcm[at * 16 + i] = Math.round(12_000 * Math.sin((2 * Math.PI * p.hz * i) / 16_000));
    spans.push({ startMs: at, endMs: at + p.ms, hz: p.hz });
    at += p.ms + gapMs;
  }
  return { pcm, spans };
}

const chunked = (pcm: Int16Array, bytes = 6401): Buffer[] => {
  const buf = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += bytes) out.push(buf.subarray(i, i + bytes));
  return out;
};

describe('SpeechWindowCutter', () => {
  it('cuts speech regions at pauses into windows of about 1.5 s, with their audio', async () => {
    const { pcm, spans } = tones([
      { hz: 300, ms: 1000 },
      { hz: 300, ms: 4000 },
      { hz: 300, ms: 2200 },
    ]);
    const cutter = new SpeechWindowCutter(energy.createStream());
    const windows = [];
    for (const c of chunked(pcm)) windows.push(...(await cutter.push(c)));
    windows.push(...(await cutter.flush()));
    // 1 s: one window; 4 s: three of 1.33 s; 2.2 s: one (two would be 1.1 s each, further from 1.5 s)
    expect(windows.map((w) => Math.round((w.endMs - w.startMs) / 100) * 100)).toEqual([1000, 1300, 1300, 1300, 2200]);
    const regions = [windows.slice(0, 1), windows.slice(1, 4), windows.slice(4)];
    regions.forEach((ws, i) => {
      // the detector's 32 ms frames: edges within two frames
      expect(Math.abs(ws[0]!.startMs - spans[i]!.startMs)).toBeLessThanOrEqual(64);
      expect(Math.abs(ws.at(-1)!.endMs - spans[i]!.endMs)).toBeLessThanOrEqual(64);
    });
    for (const w of windows) expect(w.samples.length).toBe(Math.round((w.endMs - w.startMs) * 16));
    // the audio is the tone itself
    const w = windows[2]!;
    expect(Array.from(w.samples.subarray(0, 8))).toEqual(Array.from(pcm.subarray(w.startMs * 16, w.startMs * 16 + 8)));
  });

  it('cuts a region longer than maxRegionMs and returns nothing for silence', async () => {
    const { pcm } = tones([{ hz: 300, ms: 9000 }]);
    const cutter = new SpeechWindowCutter(energy.createStream(), { maxRegionMs: 4000 });
    const windows = [...(await cutter.push(Buffer.from(pcm.buffer))), ...(await cutter.flush())];
    // regions of 4 s, 4 s and 1 s: three windows, three, one
    expect(windows.length).toBe(7);
    expect(windows.every((w) => w.endMs - w.startMs <= 2000)).toBe(true);
    const quiet = new SpeechWindowCutter(energy.createStream());
    expect([...(await quiet.push(Buffer.alloc(64_000))), ...(await quiet.flush())]).toEqual([]);
  });
});

describe('EmbeddingDiarizer', () => {
  it('two alternating tones are two speakers at the right times; labelled tokens follow them', async () => {
    const parts = [300, 1200, 300, 1200, 1200, 300].map((hz) => ({ hz, ms: 2000 }));
    const { pcm, spans } = tones(parts);
    const turns = await new EmbeddingDiarizer(engine, { vad: energy }).diarize(chunked(pcm));
    expect(new Set(turns.map((t) => t.speaker))).toEqual(new Set([0, 1]));
    const reference = spans.map((s) => ({ startMs: s.startMs, endMs: s.endMs, speaker: String(s.hz) }));
    expect(diarizationErrorRate(reference, turns).der).toBeLessThan(0.05);
    const tokens = labelTokens(
      spans.map((s) => ({ start_ms: s.startMs + 200, end_ms: s.endMs - 200 })),
      turns,
    );
    expect(tokens.map((t) => t.speaker)).toEqual(['1', '2', '1', '2', '2', '1']);
  });

  it('one tone throughout is one speaker; silence is no turn; a short burst takes its neighbour', async () => {
    const d = new EmbeddingDiarizer(engine, { vad: energy });
    const one = await d.diarize(chunked(tones([500, 500, 500].map((hz) => ({ hz, ms: 1800 }))).pcm));
    expect(new Set(one.map((t) => t.speaker))).toEqual(new Set([0]));
    expect(await d.diarize([Buffer.alloc(96_000)])).toEqual([]);
    // A 300 ms burst of another pitch right after a 300 Hz turn: too short to embed, it is not a speaker of its own.
    const { pcm, spans } = tones([
      { hz: 300, ms: 2500 },
      { hz: 2000, ms: 300 },
      { hz: 1200, ms: 2500 },
    ]);
    const turns = await d.diarize(chunked(pcm));
    expect(new Set(turns.map((t) => t.speaker)).size).toBe(2);
    expect(
      labelTokens(
        spans.map((s) => ({ start_ms: s.startMs, end_ms: s.endMs })),
        turns,
      ).map((t) => t.speaker),
    ).toEqual(['1', '1', '2']);
    // Only short bursts: they are embedded after all (and, each pitch with under 2 s, folded into one speaker).
    const shortBursts = tones([300, 1200, 300].map((hz) => ({ hz, ms: 300 }))).pcm;
    expect((await d.diarize(chunked(shortBursts))).map((t) => t.speaker)).toEqual([0, 0, 0]);
    const shorts = await new EmbeddingDiarizer(engine, { vad: energy, minSpeakerMs: 0 }).diarize(chunked(shortBursts));
    expect(shorts.map((t) => t.speaker)).toEqual([0, 1, 0]);
  });

  it('two flite voices in conversation: kal and slt found, DER under 10 %', async () => {
    const voice = (v: string): CorpusSpeaker => ({
      name: v,
      source: 'flite',
      clips: [
        'The birch canoe slid on the smooth planks.',
        'Glue the sheet to the dark blue background.',
        'Rice is often served in round bowls.',
        'The juice of lemons makes fine punch.',
      ].map((text, i) => {
        const file = path.join(work, `${v}-${i}.wav`);
        execFileSync('flite', ['-voice', v, '-t', text, '-o', file]);
        return file;
      }),
    });
    const conv = buildConversation([voice('kal'), voice('slt')], { turns: 8, seed: 2 });
    const turns = await new EmbeddingDiarizer(engine, { vad: silero }).diarize(chunked(conv.pcm));
    const r = diarizationErrorRate(conv.turns, turns);
    expect(r.hypothesisSpeakers).toBe(2);
    expect(r.der).toBeLessThan(0.1);
  }, 60_000);

  it('a speaker count on real voices: exactly N, at most max, at least min; not more than the speech holds', async () => {
    const voices = new Map(realSpeakers().map((v) => [v.name, v]));
    const names = ['ivrvoice-ru', 'librivox', 'allison'];
    if (names.some((n) => !voices.has(n))) throw new Error('needs asterisk-core-sounds-{en,ru}-wav and pocketsphinx-testdata (scripts/debian-packages.txt)');
    // The diarization benchmark's 3-speaker conversation of seed 2.
    const conv = buildConversation(
      names.map((n) => voices.get(n)!),
      { turns: 14, seed: 2 },
    );
    const count = (turns: { speaker: number }[]) => new Set(turns.map((t) => t.speaker)).size;
    const d = new EmbeddingDiarizer(engine, { vad: silero });
    // The spectrum model hears the three women as one voice at the default threshold.
    expect(count(await d.diarize(chunked(conv.pcm)))).toBe(1);
    const exact = await d.diarize(chunked(conv.pcm), { speakers: { min: 3, max: 3 } });
    expect(count(exact)).toBe(3);
    expect(count(await d.diarize(chunked(conv.pcm), { speakers: { min: 2 } }))).toBeGreaterThanOrEqual(2);
    // A strict threshold splits them into many; a max merges the most similar down to it.
    const strict = new EmbeddingDiarizer(engine, { vad: silero, threshold: 0.9 });
    expect(count(await strict.diarize(chunked(conv.pcm)))).toBeGreaterThan(3);
    expect(count(await strict.diarize(chunked(conv.pcm), { speakers: { max: 2 } }))).toBe(2);
    // One 1.3 s prompt is one window: one speaker, whatever the hint says.
    const one = buildConversation([voices.get('allison')!], { turns: 1, seed: 1 });
    expect(count(await d.diarize(chunked(one.pcm), { speakers: { min: 3, max: 3 } }))).toBe(1);
    // A hint out of range is refused.
    await expect(d.diarize([Buffer.alloc(32_000)], { speakers: { min: 4, max: 3 } })).rejects.toThrow(RangeError);
  }, 180_000);

  it('a model that cannot be used fails the file before its audio is read', async () => {
    const broken: SpeakerEmbedder = {
      modelId: 'broken-v1',
      ready: async () => {
        throw new Error('could not be loaded by sherpa-onnx');
      },
      embed: async () => new Float32Array(4),
      cluster: async () => [],
    };
    let read = 0;
    function* audio() {
      for (const c of chunked(tones([{ hz: 300, ms: 3000 }]).pcm)) {
        read++;
        yield c;
      }
    }
    await expect(new EmbeddingDiarizer(broken, { vad: energy }).diarize(audio())).rejects.toThrow('could not be loaded');
    expect(read).toBe(0);
  });

  it('an embedding failing mid-file fails it after the audio was read to its end, without embedding the rest', async () => {
    let calls = 0;
    const failing: SpeakerEmbedder = {
      modelId: 'failing-v1',
      ready: async () => {},
      embed: async () => {
        calls++;
        throw new Error('worker thread exited with 1');
      },
      cluster: async () => [],
    };
    const chunks = chunked(tones(Array.from({ length: 20 }, () => ({ hz: 300, ms: 1500 }))).pcm);
    let read = 0;
    function* audio() {
      for (const c of chunks) {
        read++;
        yield c;
      }
    }
    await expect(new EmbeddingDiarizer(failing, { vad: energy }).diarize(audio())).rejects.toThrow('worker thread exited');
    expect(read).toBe(chunks.length);
    expect(calls).toBeLessThanOrEqual(6);
  });

  it('stops at an abort', async () => {
    const controller = new AbortController();
    const chunks = chunked(tones([300, 1200].map((hz) => ({ hz, ms: 2000 }))).pcm);
    async function* cut() {
      for (const [i, c] of chunks.entries()) {
        if (i === 3) controller.abort(new Error('cancelled'));
        yield c;
      }
    }
    await expect(new EmbeddingDiarizer(engine, { vad: energy }).diarize(cut(), { signal: controller.signal })).rejects.toThrow('cancelled');
  });

  it('live streams go to the BIC online clusterer', () => {
    const d = new EmbeddingDiarizer(engine, { vad: energy });
    expect(d.name).toBe('embedding:spectrum-v1');
    const stream = d.createStream();
    expect(stream.speakerAt(0, 100)).toBeUndefined();
  });
});
