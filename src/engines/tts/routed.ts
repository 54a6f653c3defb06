// A multilingual TTS engine whose languages can each be spoken by another engine: the default model speaks English
// with flite's voices (round-trip WER through our recogniser 22–42 %) and every other language with espeak-ng's
// (espeak-ng's English formant voices: 84–94 %; docs/benchmarks.md, "Intelligibility per voice"). Voices of the
// routed language are named `<engine>:<voice>` (TtsModel.voiceIn picks them per request), so one synthesis call
// always goes to one engine.
import type { TtsEngineDescriptor } from './descriptor.js';
import { EspeakEngine } from './espeak.js';
import { FliteEngine } from './flite.js';
import type { SynthesisChunk, SynthesisOptions, TtsEngine } from './interface.js';
import type { TtsVoice } from './model.js';
import type { SsmlDocument } from './ssml/parse.js';
import { synthesizeSsml } from './ssml/source.js';
import { ESPEAK_CURATED } from './voice-table.js';
import { buildVoices } from './voices.js';

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
    return r.engine.synthesize(text, r.voice, language, this.optionsFor(r.engine, opts));
  }

  /** SSML through the engine that speaks the voice: natively, or through the translator. */
  synthesizeSsml(doc: SsmlDocument, voice: string, language: string, opts: SynthesisOptions = {}): AsyncIterable<SynthesisChunk> {
    const r = this.route(voice);
    return synthesizeSsml(r.engine, doc, r.voice, language, this.optionsFor(r.engine, opts));
  }

  private optionsFor(engine: TtsEngine, opts: SynthesisOptions): SynthesisOptions {
    const { pitchRange, ...rest } = opts;
    return engine.supportsPitchRange ? { ...rest, pitchRange } : rest;
  }

  speaks(text: string, voice: string): boolean {
    const r = this.route(voice);
    return r.engine.speaks?.(text, r.voice) ?? true;
  }

  available(): Promise<boolean> {
    return this.base.available();
  }
}

/**
 * English voices of the routed model that flite speaks: each the flite voice nearest in kind, all distinct, so the
 * voices stay tell-apart. Round-trip WER through our recogniser (docs/benchmarks.md): rms 22.2 %, awb 25.9 %, slt
 * 42.0 %, kal16 43.2 %, against 84–94 % for the espeak-ng voices they replace. The other voices (flite has one female
 * speaker) keep espeak-ng's English.
 */
const ENGLISH_BY_FLITE: Readonly<Record<string, string>> = { Adrian: 'rms', Maya: 'slt', Oliver: 'awb', Noah: 'kal16' };

function englishVoiceOf(voice: TtsVoice, flite: TtsEngine): TtsVoice {
  const engineVoice = ENGLISH_BY_FLITE[voice.id];
  const ev = engineVoice === undefined ? undefined : flite.voices.find((v) => v.id === engineVoice);
  return ev ? { ...voice, engineVoice: `${flite.name}:${ev.id}`, sampleRate: ev.sampleRate } : voice;
}

/** The model the public aliases name: every language by espeak-ng, with flite's voices for English. */
export const routedTtsEngine: TtsEngineDescriptor = {
  family: 'tts',
  id: 'espeak-ng+flite',
  models: ['parlance-tts-v1'],
  async build({ wanted }) {
    const [espeak, flite] = [new EspeakEngine(), new FliteEngine()];
    if (!wanted('parlance-tts-v1') || !(await flite.available()) || !(await espeak.available())) return [];
    await espeak.init();
    const english = new Map<string, TtsVoice>();
    return [
      {
        id: 'parlance-tts-v1',
        name: 'Parlance TTS v1 (English: flite; other languages: espeak-ng)',
        engine: new LanguageRoutedEngine(espeak, [flite]),
        voices: buildVoices(espeak, ESPEAK_CURATED, true),
        supportsSilenceReduction: true,
        voiceIn(voice, language) {
          if (language !== 'en') return voice;
          let v = english.get(voice.id);
          if (!v) english.set(voice.id, (v = englishVoiceOf(voice, flite)));
          return v;
        },
      },
    ];
  },
};
