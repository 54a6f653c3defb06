// Decoding and scoring of real recordings for the WER suite (wer.ts) and its tuning and context parts.
import { performance } from 'node:perf_hooks';
import { decodeToPcm } from '../src/audio/decode.js';
import type { Recognizer, Token, TranscribeOptions } from '../src/engines/stt/interface.js';
import { PocketsphinxEngine } from '../src/engines/stt/pocketsphinx/engine.js';
import type { PocketsphinxOptions } from '../src/engines/stt/pocketsphinx/options.js';
import { wordErrorRate } from '../src/engines/stt/wer.js';
import { formatTranscript } from '../src/text/format.js';
import { type RealClip, werOf } from '../test/real-speech.js';
import { round, type Row } from './lib.js';

export interface ClipResult {
  file: string;
  set: string;
  split: string;
  reference: string;
  raw: string;
  formatted: string;
  audio_ms: number;
  decode_ms: number;
  wer_raw: number;
  wer_formatted: number;
}

/** Engine and formatter tokens are bare words (the API adds the spaces of the SDK's token-join rule). */
const text = (tokens: readonly Token[]): string => tokens.map((t) => t.text).join(' ');

/** Decode every clip (two at a time: one per core) and score it raw and formatted. */
export async function decodeClips(
  recognizer: Recognizer,
  clips: readonly RealClip[],
  split: (c: RealClip) => string,
  options: (c: RealClip) => TranscribeOptions = () => ({}),
): Promise<ClipResult[]> {
  const out: ClipResult[] = new Array(clips.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < clips.length; i = next++) {
      const clip = clips[i]!;
      let bytes = 0;
      async function* pcm() {
        for await (const chunk of decodeToPcm(clip.file)) {
          bytes += chunk.length;
          yield chunk;
        }
      }
      const t0 = performance.now();
      const tokens = await recognizer.transcribe(pcm(), { language: 'en', ...options(clip) });
      const decodeMs = performance.now() - t0;
      const raw = text(tokens);
      const formatted = text(formatTranscript(tokens, { language: 'en' }));
      out[i] = {
        file: clip.file,
        set: clip.set,
        split: split(clip),
        reference: clip.reference,
        raw,
        formatted,
        audio_ms: Math.round(bytes / 32),
        decode_ms: Math.round(decodeMs),
        wer_raw: wordErrorRate(clip.reference, raw).wer,
        wer_formatted: wordErrorRate(clip.reference, formatted).wer,
      };
    }
  };
  await Promise.all([worker(), worker()]);
  return out;
}

export async function withRecognizer<T>(options: PocketsphinxOptions, fn: (r: Recognizer) => Promise<T>): Promise<T> {
  const engine = new PocketsphinxEngine({ secondPass: false, warmStreams: 0, poolSize: 2, maxSegmentsPerRequest: 1, ...options });
  try {
    return await fn(await engine.load('en-us'));
  } finally {
    await engine.close();
  }
}

export function totals(results: readonly ClipResult[]): { raw: ReturnType<typeof werOf>; formatted: ReturnType<typeof werOf>; rtf: number } {
  const raw = werOf(results.map((r) => ({ reference: r.reference, text: r.raw })));
  const formatted = werOf(results.map((r) => ({ reference: r.reference, text: r.formatted })));
  const audio = results.reduce((a, r) => a + r.audio_ms, 0);
  const decode = results.reduce((a, r) => a + r.decode_ms, 0);
  return { raw, formatted, rtf: audio ? decode / audio : 0 };
}

export const pct = (x: number) => `${round(x * 100, 1)} %`;

export function werRows(label: string, results: readonly ClipResult[]): Row[] {
  const rows: Row[] = [];
  const groups = new Map<string, ClipResult[]>();
  for (const r of results) {
    const key = `${r.set}, ${r.split}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, group] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    const t = totals(group);
    rows.push({
      benchmark: `${label}: ${key} (${group.length} clips, ${t.raw.words} words)`,
      result: `raw ${pct(t.raw.wer)}, formatted ${pct(t.formatted.wer)}; RTF ${round(t.rtf, 3)}`,
      target: '—',
      met: null,
    });
  }
  return rows;
}
