// The synthesis pipeline: engine → cloned voice's pitch → silence reduction → the audio cap → encoder (in-process
// for raw formats, ffmpeg for codecs), with the character timings of the audio handed to the encoder.
import { silenceBoundsOffThread } from '../../audio/audio-thread.js';
import { PitchShifter } from '../../audio/pitch-shift.js';
import { rawEncode } from '../../audio/raw-encode.js';
import { isRawOutputFormat } from '../../audio/raw-output.js';
import { encode } from '../../audio/speech-encoder.js';
import { PauseJoiner } from '../../engines/tts/ssml/pauses.js';
import { type SpeechSource, synthesizeSource } from '../../engines/tts/ssml/source.js';
import type { TtsTimestamps, TtsWordTimestamp } from '../../wire/tts-frames.js';
import type { TtsConfig } from './request-config.js';
import { placeWords, segmentWords } from './word-times.js';

/** Engine speed bounds once a cloned voice's rate multiplies the request's speed. */
const ENGINE_SPEED_MIN = 0.5;
const ENGINE_SPEED_MAX = 2;

export interface TtsOutputChunk {
  audio: Buffer;
  /** Characters whose audio was handed to the encoder since the previous chunk. */
  timestamps?: TtsTimestamps;
  /** Words whose audio was handed to the encoder since the previous chunk (when asked for), ms from the start. */
  words?: TtsWordTimestamp[];
}

export interface TtsOutput {
  chunks: AsyncGenerator<TtsOutputChunk>;
  /** True once the 2-minute cap cut the audio. */
  truncated(): boolean;
  /** Timings not yet attached to a chunk (for the final frame). */
  takeTimestamps(): TtsTimestamps | undefined;
  /** Word times not yet attached to a chunk (for the final frame). */
  takeWords(): TtsWordTimestamp[] | undefined;
  /** Seconds of audio generated so far. */
  seconds(): number;
}

function charTimings(text: string, startSec: number, durSec: number): TtsTimestamps {
  const chars = Array.from(text);
  const step = chars.length ? durSec / chars.length : 0;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    characters: chars,
    character_start_times_seconds: chars.map((_, i) => r(startSec + i * step)),
    character_end_times_seconds: chars.map((_, i) => r(startSec + (i + 1) * step)),
  };
}

function mergeTtsTimestamps(list: TtsTimestamps[]): TtsTimestamps | undefined {
  if (!list.length) return undefined;
  return {
    characters: list.flatMap((t) => t.characters),
    character_start_times_seconds: list.flatMap((t) => t.character_start_times_seconds),
    character_end_times_seconds: list.flatMap((t) => t.character_end_times_seconds),
  };
}

export interface SynthesizeOptions {
  /** Word times with the audio (TtsOutputChunk.words). */
  words?: boolean;
}

/** Start synthesis. The returned chunks stream as the engine produces audio; stopping them stops the engine. */
export function synthesize(cfg: TtsConfig, text: SpeechSource, maxAudioSeconds: number, signal?: AbortSignal, opts: SynthesizeOptions = {}): TtsOutput {
  const ac = new AbortController();
  const onAbort = () => ac.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const inRate = cfg.voice.sampleRate;
  const maxSamples = Math.round(maxAudioSeconds * inRate);
  const state = { samples: 0, truncated: false, pending: [] as TtsTimestamps[], words: [] as TtsWordTimestamp[], lastWordMs: 0 };
  const wordTimings = opts.words === true;
  const engine = cfg.model.engine;
  const style = cfg.cloned;
  const speed = style ? Math.min(ENGINE_SPEED_MAX, Math.max(ENGINE_SPEED_MIN, cfg.speed * style.rate)) : cfg.speed;
  const pitchRange = style && engine.supportsPitchRange ? { pitchRange: style.pitchRange } : {};

  // Ended with the synthesis: chunks() aborts `ac` when the output finishes, fails or is dropped.
  const shifter = style ? new PitchShifter(inRate, style.pitchSemitones, ac.signal) : undefined;

  // SSML breaks: their silence placed between the audio around them.
  const pauses = new PauseJoiner(inRate);

  async function* pcm(): AsyncGenerator<Buffer> {
    for await (const ch of synthesizeSource(engine, text, cfg.voice.engineVoice, cfg.language, { speed, ...pitchRange, wordTimings, signal: ac.signal })) {
      let p = ch.pcm;
      const words = wordTimings ? segmentWords(ch, inRate) : undefined;
      // A cloned voice's pitch: shifted after synthesis, segment by segment, keeping length and formants.
      if (shifter && p.length) p = await shifter.shift(p);
      // What is cut off the segment's start moves its words earlier.
      let cut = 0;
      if (cfg.reduceSilence && p.length) {
        const [from, to] = await silenceBoundsOffThread(p, inRate);
        p = p.subarray(from, to);
        cut = from / 2 / inRate;
      }
      const joined = pauses.join(p, ch.pauseSeconds);
      if (ch.pauseSeconds === undefined) cut += (p.length - joined.length) / 2 / inRate;
      p = joined;
      let n = p.length >> 1;
      let segText = ch.text;
      if (state.samples + n > maxSamples) {
        const keep = Math.max(0, maxSamples - state.samples);
        segText = segText.slice(0, Math.floor((segText.length * keep) / Math.max(1, n)));
        p = p.subarray(0, keep * 2);
        n = keep;
        state.truncated = true;
      }
      const start = state.samples / inRate;
      // A space between segments keeps the character stream equal to the spoken text.
      const spoken = state.samples > 0 && segText ? ` ${segText}` : segText;
      if (spoken) state.pending.push(charTimings(spoken, start, n / inRate));
      if (words) {
        const placed = placeWords(words, { cut, kept: n / inRate, offset: start, truncated: state.truncated, previousEndMs: state.lastWordMs });
        state.words.push(...placed);
        state.lastWordMs = placed.at(-1)?.end_ms ?? state.lastWordMs;
      }
      state.samples += n;
      if (p.length) yield p;
      if (state.truncated) return;
    }
  }

  // Uncompressed formats are converted in-process; codecs go through a streaming ffmpeg encoder.
  const encoded = isRawOutputFormat(cfg.format)
    ? rawEncode(pcm(), { inputRate: inRate, outputRate: cfg.sampleRate, format: cfg.format })
    : encode(pcm(), { inputRate: inRate, outputRate: cfg.sampleRate, format: cfg.format, bitrate: cfg.bitrate });
  const takeWords = () => (state.words.length ? state.words.splice(0) : undefined);
  async function* chunks(): AsyncGenerator<TtsOutputChunk> {
    try {
      for await (const audio of encoded) {
        const ts = mergeTtsTimestamps(state.pending.splice(0));
        const words = takeWords();
        yield { audio, ...(ts ? { timestamps: ts } : {}), ...(words ? { words } : {}) };
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      ac.abort();
    }
  }
  return {
    chunks: chunks(),
    truncated: () => state.truncated,
    takeTimestamps: () => mergeTtsTimestamps(state.pending.splice(0)),
    takeWords,
    seconds: () => state.samples / inRate,
  };
}
