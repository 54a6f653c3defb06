// Diarization suite (issue #8): DER of the built-in diarizer on conversations concatenated from real recordings of
// different people (and, for comparison, flite voices), 2, 3 and 4 speakers, offline (files) and online (streams),
// plus RTF. The engine is called in-process on the same code path the server uses (BicDiarizer with Silero VAD).
//   offline DER: NIST-style (missed + false alarm + confusion) / reference speech, 250 ms collar, optimal mapping.
//   online DER:  each reference turn is labelled by speakerAt() once 600 ms of audio after it has been fed (when
//                its real-time tokens would turn final); boundaries are the reference's, so this is speaker
//                confusion only.
// Tune / held-out: seeds 1–4 are the tuning half (the window length, λ and how a speaker count bounds the offline
// clustering were chosen on them), seeds 5–8 the held-out half, reported apart; the voices are the same in both, the
// clips and their order differ.
// --speakers=exact: each conversation is diarized again with its true speaker count as the hint (DiarizeOptions
// and StreamOptions speakers: { min: n, max: n }), and the rows give DER without → with it.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadVad } from '../src/audio/vad.js';
import { diarizationErrorRate } from '../src/engines/diarization/der.js';
import { BicDiarizer } from '../src/engines/diarization/index.js';
import type { SpeakerCount } from '../src/engines/diarization/interface.js';
import { buildConversation, type Conversation, type CorpusSpeaker, realSpeakers } from '../test/diarization-corpus.js';
import { tempDir } from '../test/harness.js';
import { HARVARD_SENTENCES, round, type Row, type SuiteOptions, type SuiteResult } from './lib.js';

const chunks = (pcm: Int16Array, bytes = 3200): Buffer[] => {
  const buf = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += bytes) out.push(buf.subarray(i, i + bytes));
  return out;
};

interface Scores {
  audioMs: number;
  offlineDer: number;
  offlineFound: number;
  offlineMs: number;
  onlineDer: number;
  onlineFound: number;
  onlineMs: number;
}

interface Measure extends Scores {
  set: string;
  half: Half;
  speakers: number;
  seed: number;
  names: string[];
  /** The same conversation with its true speaker count as the hint (--speakers=exact). */
  hinted?: Scores;
}

const HALVES = { tune: [1, 2, 3, 4], 'held-out': [5, 6, 7, 8] } as const;
type Half = keyof typeof HALVES;

async function measure(diarizer: BicDiarizer, conv: Conversation, speakers?: SpeakerCount): Promise<Scores> {
  const parts = chunks(conv.pcm);
  let t0 = performance.now();
  const turns = await diarizer.diarize(parts, { speakers });
  const offlineMs = performance.now() - t0;
  const off = diarizationErrorRate(conv.turns, turns);
  const stream = diarizer.createStream({ speakers });
  const asked: { startMs: number; endMs: number; speaker: number }[] = [];
  let next = 0;
  let fed = 0;
  t0 = performance.now();
  for (const c of parts) {
    await stream.push(c);
    fed += c.length / 32;
    while (next < conv.turns.length && conv.turns[next]!.endMs + 600 <= fed) {
      const t = conv.turns[next++]!;
      asked.push({ startMs: t.startMs, endMs: t.endMs, speaker: stream.speakerAt(t.startMs, t.endMs) ?? 0 });
    }
  }
  await stream.flush();
  for (const t of conv.turns.slice(next)) asked.push({ startMs: t.startMs, endMs: t.endMs, speaker: stream.speakerAt(t.startMs, t.endMs) ?? 0 });
  const onlineMs = performance.now() - t0;
  const on = diarizationErrorRate(conv.turns, asked);
  return {
    audioMs: conv.durationMs,
    offlineDer: off.der,
    offlineFound: off.hypothesisSpeakers,
    offlineMs,
    onlineDer: on.der,
    onlineFound: on.hypothesisSpeakers,
    onlineMs,
  };
}

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const hint = opts.args.speakers;
  if (hint !== undefined && hint !== 'exact') throw new Error(`--speakers takes "exact" (the true speaker count as the hint), not "${hint}"`);
  const work = tempDir('parlance-bench-diar-');
  opts.cleanup.add('diarization work dir', () => rmSync(work, { recursive: true, force: true }));
  const vad = await loadVad({ log: () => {} });
  const diarizer = new BicDiarizer({ vad });
  const real = realSpeakers();
  if (real.length < 4) throw new Error('needs asterisk-core-sounds-{en,fr,ru}-wav and pocketsphinx-testdata (scripts/debian-packages.txt)');
  const flite: CorpusSpeaker[] = ['kal', 'slt', 'awb', 'rms'].map((v) => ({
    name: v,
    source: 'flite',
    clips: HARVARD_SENTENCES.slice(0, 10).map((text, i) => {
      const file = path.join(work, `${v}-${i}.wav`);
      execFileSync('flite', ['-voice', v, '-t', text, '-o', file]);
      return file;
    }),
  }));
  const results: Measure[] = [];
  for (const [set, pool] of [
    ['real', real],
    ['flite', flite],
  ] as const) {
    for (const half of ['tune', 'held-out'] as const) {
      for (const n of [2, 3, 4]) {
        for (const seed of opts.quick ? HALVES[half].slice(0, 1) : HALVES[half]) {
          // Rotate through the speaker pool so every speaker appears in every group size.
          const speakers = Array.from({ length: n }, (_, i) => pool[(i + seed) % pool.length]!);
          const conv = buildConversation(speakers, { turns: 14, seed });
          const m: Measure = { set, half, speakers: n, seed, names: speakers.map((s) => s.name), ...(await measure(diarizer, conv)) };
          if (hint) m.hinted = await measure(diarizer, conv, { min: n, max: n });
          results.push(m);
          const line = (r: Scores) =>
            `offline DER ${(r.offlineDer * 100).toFixed(1)} % (${r.offlineFound} found), online ${(r.onlineDer * 100).toFixed(1)} % (${r.onlineFound})`;
          opts.log(`${set} ${half} n=${n} seed=${seed} ${(m.audioMs / 1000).toFixed(1)} s: ${line(m)}${m.hinted ? `; exact count: ${line(m.hinted)}` : ''}`);
        }
      }
    }
  }
  const rows: Row[] = [];
  const pct = (v: number) => `${round(v * 100, 1)} %`;
  // Pooled over conversations: DER weighted by reference speech ≈ audio here.
  const der = (g: Scores[], k: 'offlineDer' | 'onlineDer') => g.reduce((s, r) => s + r[k] * r.audioMs, 0) / g.reduce((s, r) => s + r.audioMs, 0);
  const found = (g: Scores[], k: 'offlineFound' | 'onlineFound') => g.map((r) => r[k]).join('/');
  /** DER (speakers found), and with --speakers=exact "without → with the hint". */
  const cell = (g: Measure[], mode: 'offline' | 'online') => {
    const one = (s: Scores[]) => `${pct(der(s, `${mode}Der`))} (${found(s, `${mode}Found`)})`;
    return hint ? `${one(g)} → ${one(g.map((r) => r.hinted!))}` : one(g);
  };
  const versus = hint ? ', without → with the exact count' : '';
  for (const set of ['real', 'flite']) {
    for (const half of ['tune', 'held-out'] as const) {
      const inHalf = results.filter((r) => r.set === set && r.half === half);
      for (const n of [2, 3, 4]) {
        const g = inHalf.filter((r) => r.speakers === n);
        for (const mode of ['offline', 'online'] as const) {
          rows.push({ benchmark: `${set} ${n} speakers, ${half}: ${mode} DER (speakers found)${versus}`, result: cell(g, mode), target: 'report', met: null });
        }
      }
      if (hint) {
        for (const mode of ['offline', 'online'] as const) {
          const all = (s: Scores[]) => pct(der(s, `${mode}Der`));
          rows.push({
            benchmark: `${set} 2–4 speakers, ${half}: ${mode} DER, pooled${versus}`,
            result: `${all(inHalf)} → ${all(inHalf.map((r) => r.hinted!))}`,
            target: 'report',
            met: null,
          });
        }
      }
    }
  }
  const audio = results.reduce((s, r) => s + r.audioMs, 0);
  const offRtf = results.reduce((s, r) => s + r.offlineMs, 0) / audio;
  const onRtf = results.reduce((s, r) => s + r.onlineMs, 0) / audio;
  rows.push({ benchmark: 'offline RTF (VAD + features + clustering, 1 thread)', result: String(round(offRtf, 3)), target: '< 0.1', met: offRtf < 0.1 });
  rows.push({ benchmark: 'online RTF (per stream, 1 thread)', result: String(round(onRtf, 3)), target: '< 0.1', met: onRtf < 0.1 });
  return { rows, raw: { speakers: real.map((s) => ({ name: s.name, source: s.source, clips: s.clips.length })), results } };
}
