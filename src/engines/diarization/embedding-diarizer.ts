// File diarization with a speaker-embedding model (engines/speaker), used instead of BIC when one is installed:
//   1. the voice activity detector's speech regions are cut into windows of ~1.5 s (speech-windows.ts);
//   2. each window of at least `minWindowMs` gets an embedding (on the model's worker threads);
//   3. agglomerative clustering by cosine similarity with a threshold decides the speakers (speaker/cluster.ts),
//      within a speaker-count hint's bounds (merging past the threshold down to max, stopping at min, the fold of
//      light speakers too; min needs min embedded windows); shorter windows take the speaker of the nearest
//      embedded window;
//   4. consecutive windows of one speaker become one turn, across pauses up to `maxTurnGapMs`.
// Live streams stay with the BIC online clusterer: it labels as the audio comes, which needs no model call per frame.
import { loadVadOffThread } from '../../audio/audio-thread.js';
import type { Vad, VadLog } from '../../audio/vad.js';
import type { SpeakerEmbedder } from '../speaker/engine.js';
import { BicDiarizer } from './index.js';
import type { DiarizationEngine, DiarizationStream, DiarizeOptions, MeasureOptions, SpeakerTurn, StreamOptions, VoicePrint } from './interface.js';
import { speakerRange, type SpeakerRange } from './speaker-count.js';
import { SpeechWindowCutter, type SpeechWindow, type SpeechWindowOptions } from './speech-windows.js';
import { TurnSamples } from './turn-samples.js';

/** Speech of one speaker that goes into its embedding: a minute describes a voice; more only costs time. */
const MAX_EMBEDDED_MS = 60_000;

export interface EmbeddingDiarizerOptions {
  windows?: SpeechWindowOptions;
  /**
   * Cosine similarity from which two clusters are one speaker (default 0.5). Distances between real 3D-Speaker and
   * WeSpeaker embeddings of one voice are mostly under 0.5 (similarity over 0.5), of two voices over it; sherpa-onnx's
   * own diarization uses the same cut.
   */
  threshold?: number;
  /** Windows shorter than this (ms, default 500) are too short to describe a voice: they get no embedding. */
  minWindowMs?: number;
  /** A speaker with less speech than this (ms, default 2000) joins the most similar one. */
  minSpeakerMs?: number;
  /** Silence inside one speaker's speech that still counts as one turn, ms (default 500). */
  maxTurnGapMs?: number;
  /** A loaded VAD; by default Silero (energy fallback) is loaded on first use, on the batch audio thread. */
  vad?: Vad;
  /** Live streams' diarizer (default: a BicDiarizer with the same VAD and log). */
  live?: DiarizationEngine;
  log?: VadLog;
}

export const DEFAULT_EMBEDDING_THRESHOLD = 0.5;

interface Embedded {
  window: Omit<SpeechWindow, 'samples'>;
  embedding?: Promise<Float32Array>;
}

export class EmbeddingDiarizer implements DiarizationEngine {
  readonly name: string;
  private vad: Promise<Vad> | undefined;
  private readonly live: DiarizationEngine;

  constructor(
    private readonly embedder: SpeakerEmbedder,
    private readonly options: EmbeddingDiarizerOptions = {},
  ) {
    this.name = `embedding:${embedder.modelId}`;
    if (options.vad) this.vad = Promise.resolve(options.vad);
    this.live = options.live ?? new BicDiarizer({ vad: options.vad, log: options.log });
  }

  private loadVad(): Promise<Vad> {
    return (this.vad ??= loadVadOffThread({ log: this.options.log, lane: 'batch' }));
  }

  async diarize(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: DiarizeOptions = {}): Promise<SpeakerTurn[]> {
    const { signal } = options;
    const count = speakerRange(options.speakers);
    // A model that cannot be used fails the file before its audio is read.
    await this.embedder.ready();
    const cutter = new SpeechWindowCutter((await this.loadVad()).createStream(), this.options.windows);
    const minSamples = (this.options.minWindowMs ?? 500) * 16;
    const windows: Embedded[] = [];
    // Audio of the short windows, kept only until a full window turns up (see below).
    let short: Map<Embedded, Int16Array> | undefined = new Map();
    const inFlight: Promise<unknown>[] = [];
    const take = async (ws: SpeechWindow[]) => {
      for (const { samples, ...window } of ws) {
        const entry: Embedded = { window };
        windows.push(entry);
        if (samples.length < minSamples) {
          short?.set(entry, samples);
          continue;
        }
        short = undefined;
        entry.embedding = this.embedder.embed(samples, signal);
        entry.embedding.catch(() => undefined);
        inFlight.push(entry.embedding);
        // A few windows waiting at a time keep the decoder from running far ahead.
        while (inFlight.length > 4) await inFlight.shift();
      }
    };
    let failure: { err: unknown } | undefined;
    for await (const chunk of pcm) {
      signal?.throwIfAborted();
      // After a failure the rest is read but not cut: a decoder's stream left early can wait for its reader forever.
      if (!failure) await take(await cutter.push(chunk)).catch((err: unknown) => (failure = { err }));
    }
    if (failure) throw failure.err;
    await take(await cutter.flush());
    signal?.throwIfAborted();
    // Too little speech for any full window: the short ones are all there is to go by.
    for (const [entry, samples] of short ?? []) entry.embedding = this.embedder.embed(samples, signal);
    return this.turns(windows, count, signal);
  }

  private async turns(windows: Embedded[], count: SpeakerRange, signal?: AbortSignal): Promise<SpeakerTurn[]> {
    const withEmbedding = windows.filter((w) => w.embedding !== undefined);
    if (withEmbedding.length === 0) return [];
    const embeddings = await Promise.all(withEmbedding.map((w) => w.embedding!));
    const labels = await this.embedder.cluster(
      embeddings,
      withEmbedding.map((w) => w.window.endMs - w.window.startMs),
      {
        threshold: this.options.threshold ?? DEFAULT_EMBEDDING_THRESHOLD,
        minWeight: this.options.minSpeakerMs ?? 2000,
        ...(count.min > 1 ? { minClusters: count.min } : {}),
        ...(count.max < Infinity ? { maxClusters: count.max } : {}),
      },
      signal,
    );
    const speakerOf = new Map(withEmbedding.map((w, i) => [w, labels[i]!]));
    const turns: SpeakerTurn[] = [];
    const maxGap = this.options.maxTurnGapMs ?? 500;
    for (const w of windows) {
      const speaker = speakerOf.get(w) ?? nearest(withEmbedding, w, speakerOf);
      const last = turns[turns.length - 1];
      if (last && last.speaker === speaker && w.window.startMs - last.endMs <= maxGap) last.endMs = w.window.endMs;
      else turns.push({ startMs: w.window.startMs, endMs: w.window.endMs, speaker });
    }
    return turns;
  }

  /** The live diarizer's feature prints, each with the embedding of (up to a minute of) that speaker's audio. */
  async measure(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: MeasureOptions = {}): Promise<Map<number, VoicePrint>> {
    await this.embedder.ready();
    const audio = new TurnSamples(options.turns, MAX_EMBEDDED_MS);
    async function* tee() {
      for await (const chunk of pcm) {
        audio.add(chunk);
        yield chunk;
      }
    }
    const prints = await this.live.measure(tee(), options);
    for (const [speaker, samples] of audio.samples()) {
      const print = prints.get(speaker);
      if (print) print.embedding = { model: this.embedder.modelId, vector: Array.from(await this.embedder.embed(samples, options.signal)) };
    }
    return prints;
  }

  createStream(options?: StreamOptions): DiarizationStream {
    return this.live.createStream(options);
  }
}

/** The speaker of the embedded window nearest in time to `w`. */
function nearest(embedded: Embedded[], w: Embedded, speakerOf: Map<Embedded, number>): number {
  let best = embedded[0]!;
  let bestDist = Infinity;
  for (const e of embedded) {
    const d = Math.max(e.window.startMs - w.window.endMs, w.window.startMs - e.window.endMs, 0);
    if (d < bestDist) {
      bestDist = d;
      best = e;
    }
  }
  return speakerOf.get(best)!;
}
