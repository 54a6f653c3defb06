// espeak-ng (Debian `espeak-ng`): every language it ships (mbrola voices excluded: they need the mbrola
// program and databases) and every voice variant. One process per segment: `espeak-ng -v <lang>+<variant>
// -s <wpm> --stdout`, text on stdin (so text starting with "-" is never read as an option).
// An engine voice id is `<variant>` or `<english accent>:<variant>` (the accent applies when language=en).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TtsEngineDescriptor } from './descriptor.js';
import type { EngineVoice, SynthesisChunk, SynthesisOptions, TtsEngine, TtsLanguage } from './interface.js';
import { espeakWordsProgram, espeakWordTimes } from './espeak-words.js';
import { commandExists, OUT_FILE, runWavProcess } from './process.js';
import { espeakPieces } from './ssml/espeak-ssml.js';
import type { SsmlDocument } from './ssml/parse.js';
import { segments } from './text.js';
import { ESPEAK_CURATED } from './voice-table.js';
import { buildVoices } from './voices.js';

const execFileP = promisify(execFile);
const SAMPLE_RATE = 22_050;
const BASE_WPM = 175;
/** Preferred espeak voice for a two-letter code where several exist or the code differs. */
const PREFERRED: Record<string, string> = { en: 'en-us', fr: 'fr-fr', es: 'es', pt: 'pt-br', zh: 'cmn', vi: 'vi' };

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function prettyName(raw: string): string {
  return raw
    .replace(/_/g, ' ')
    .replace(/\s*\(.*\)\s*$/, '')
    .trim();
}

export class EspeakEngine implements TtsEngine {
  readonly name = 'espeak-ng';
  readonly supportsSpeed = true;
  readonly supportsTimestamps = true;
  readonly supportsPitchRange = true;
  languages: TtsLanguage[] = [];
  voices: EngineVoice[] = [];
  /** two-letter code → espeak voice name. */
  private readonly langVoice = new Map<string, string>();

  constructor(private readonly bin = 'espeak-ng') {}

  available(): Promise<boolean> {
    return commandExists(this.bin, ['--version']);
  }

  /** Read the installed languages and variants. */
  async init(): Promise<this> {
    const langs = (await execFileP(this.bin, ['--voices'])).stdout.split('\n').slice(1);
    const byCode = new Map<string, { voice: string; name: string }>();
    for (const line of langs) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 5 || cols[4]!.startsWith('mb/')) continue;
      const code = cols[1]!;
      const base = code.split('-')[0]!;
      const two = base === 'cmn' ? 'zh' : base;
      if (two.length !== 2) continue;
      const preferred = PREFERRED[two];
      const existing = byCode.get(two);
      if (!existing || code === preferred || (existing.voice !== preferred && code === two))
        byCode.set(two, { voice: code, name: two === 'zh' ? 'Chinese' : prettyName(cols[3]!) });
    }
    for (const [code, v] of [...byCode.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      this.langVoice.set(code, v.voice);
      this.languages.push({ code, name: v.name });
    }
    const variants = (await execFileP(this.bin, ['--voices=variant'])).stdout.split('\n').slice(1);
    for (const line of variants) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 5) continue;
      const file = cols[4]!.replace(/^!v\//, '');
      const gender = cols[2]!.endsWith('/F') ? 'female' : 'male';
      this.voices.push({ id: file, gender, sampleRate: SAMPLE_RATE });
    }
    return this;
  }

  espeakVoice(voice: string, language: string): string {
    const [accent, variant] = voice.includes(':') ? (voice.split(':', 2) as [string, string]) : [undefined, voice];
    const lang = language === 'en' && accent ? accent : (this.langVoice.get(language) ?? language);
    return `${lang}+${variant}`;
  }

  async *synthesize(text: AsyncIterable<string> | string, voice: string, language: string, opts: SynthesisOptions = {}): AsyncGenerator<SynthesisChunk> {
    const v = this.espeakVoice(voice, language);
    const wpm = String(Math.round(BASE_WPM * (opts.speed ?? 1)));
    // A pitch range goes in as SSML prosody (-m): the text is escaped so it is still spoken verbatim.
    const range = pitchRangePercent(opts);
    for await (const seg of segments(text)) {
      const input = range === undefined ? seg : `<speak><prosody range="${range}%">${escapeXml(seg)}</prosody></speak>`;
      yield await this.speakOne(v, wpm, range !== undefined, input, seg, opts);
    }
  }

  /**
   * One espeak-ng run: `input` (SSML when `ssml`) speaking `text`. Word times asked for: the same synthesis through
   * espeak-words, which reports espeak-ng's own (espeak-words.ts).
   */
  private async speakOne(v: string, wpm: string, ssml: boolean, input: string, text: string, opts: SynthesisOptions): Promise<SynthesisChunk> {
    const timer = opts.wordTimings ? espeakWordsProgram() : undefined;
    const out = timer
      ? await runWavProcess(timer, [v, wpm, ssml ? '1' : '0', OUT_FILE], { stdin: input, signal: opts.signal })
      : await runWavProcess(this.bin, ['-v', v, '-s', wpm, ...(ssml ? ['-m'] : []), '--stdout'], { stdin: input, signal: opts.signal });
    const words = timer && out.stdout ? espeakWordTimes(text, input, out.stdout.toString('utf8')) : undefined;
    return { pcm: out.pcm, sampleRate: out.sampleRate || SAMPLE_RATE, text, ...(words ? { words } : {}) };
  }

  /** SSML read by espeak-ng itself (-m), sentence by sentence (ssml/espeak-ssml.ts). */
  async *synthesizeSsml(doc: SsmlDocument, voice: string, language: string, opts: SynthesisOptions = {}): AsyncGenerator<SynthesisChunk> {
    const speed = opts.speed ?? 1;
    const v = this.espeakVoice(voice, language);
    const wpm = String(Math.round(BASE_WPM * speed));
    for (const piece of espeakPieces(doc.items, speed, pitchRangePercent(opts))) {
      if (piece.before > 0) yield { pcm: Buffer.alloc(0), sampleRate: SAMPLE_RATE, text: '', pauseSeconds: piece.before };
      if (!piece.markup) continue;
      yield await this.speakOne(v, wpm, true, piece.markup, piece.text, opts);
    }
  }
}

/** A cloned voice's intonation range as an espeak-ng prosody percentage, when it differs from the voice's own. */
function pitchRangePercent(opts: SynthesisOptions): number | undefined {
  return opts.pitchRange !== undefined && Math.abs(opts.pitchRange - 1) > 0.01 ? Math.round(opts.pitchRange * 100) : undefined;
}

/** espeak-ng's multilingual model, with the curated voices and its own variants. */
export const espeakTtsEngine: TtsEngineDescriptor = {
  family: 'tts',
  id: 'espeak-ng',
  models: ['parlance-tts-espeak-v1'],
  async build({ wanted }) {
    const espeak = new EspeakEngine();
    if (!wanted('parlance-tts-espeak-v1') || !(await espeak.available())) return [];
    await espeak.init();
    const voices = buildVoices(espeak, ESPEAK_CURATED, true);
    return [{ id: 'parlance-tts-espeak-v1', name: 'Parlance TTS v1 (espeak-ng, multilingual)', engine: espeak, voices, supportsSilenceReduction: true }];
  },
};
