// A multilingual TTS engine whose languages can each be spoken by another engine: the default model speaks English
// with flite's voices (round-trip WER through our recogniser 22–42 %) and every other language with espeak-ng's
// (espeak-ng's English formant voices: 84–94 %; docs/benchmarks.md, "Intelligibility per voice"). Voices of the
// routed language are named `<engine>:<voice>` (TtsModel.voiceIn picks them per request), so one synthesis call
// always goes to one engine.
import type { SynthesisChunk, SynthesisOptions, TtsEngine } from './interface.js';

export class LanguageRoutedEngine implements TtsEngine {
  readonly name: string;
  readonly supportsSpeed: boolean;
  readonly supportsTimestamps: boolean;
  /** Honoured where the base engine speaks (a routed engine without it ignores the option). */
  readonly supportsPitchRange?: boolean;

  constructor(
    private readonly base: TtsEngine,
    /** Engines for `<engine name>:<voice>` voices. */
    private readonly routes: readonly TtsEngine[],
  ) {
    this.name = [base, ...routes].map((e) => e.name).join('+');
    this.supportsSpeed = [base, ...routes].every((e) => e.supportsSpeed);
    this.supportsTimestamps = [base, ...routes].every((e) => e.supportsTimestamps);
    this.supportsPitchRange = base.supportsPitchRange;
  }

  get languages() {
    return this.base.languages;
  }

  get voices() {
    return this.base.voices;
  }

  /** The engine and its own voice id for a voice of this model. */
  private route(voice: string): { engine: TtsEngine; voice: string } {
    for (const engine of this.routes) if (voice.startsWith(`${engine.name}:`)) return { engine, voice: voice.slice(engine.name.length + 1) };
    return { engine: this.base, voice };
  }

  synthesize(text: AsyncIterable<string> | string, voice: string, language: string, opts: SynthesisOptions = {}): AsyncIterable<SynthesisChunk> {
    const r = this.route(voice);
    const { pitchRange, ...rest } = opts;
    return r.engine.synthesize(text, r.voice, language, r.engine.supportsPitchRange ? { ...rest, pitchRange } : rest);
  }

  speaks(text: string, voice: string): boolean {
    const r = this.route(voice);
    return r.engine.speaks?.(text, r.voice) ?? true;
  }

  available(): Promise<boolean> {
    return this.base.available();
  }
}
