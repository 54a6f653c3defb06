// Festival (Debian `festival` + its `festvox-*` voice packages) through `text2wave`: text on stdin, WAV out.
// The installed voices are read from festival itself at start-up (`voice.list` and each voice's proclaimed
// language, gender and text coding), so a voice package that is not installed is simply not offered. Each
// voice speaks its one language. Several voices read ISO-8859-x rather than UTF-8: the text is converted.
// Speed keeps the pitch: Duration_Stretch for diphone voices, the HTS engine's own rate for HTS voices,
// and a tempo filter on the audio for cluster-unit voices (they concatenate recorded units as they are).
// Festival starts slowly (~0.3-1.4 s a segment, the HTS and cluster-unit voices being the slowest).
import { execFile } from 'node:child_process';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { decodeToBuffer } from '../../audio/decode.js';
import type { TtsEngineDescriptor } from './descriptor.js';
import type { EngineVoice, Gender, SynthesisChunk, SynthesisOptions, TtsEngine, TtsLanguage } from './interface.js';
import { commandExists, OUT_FILE, runWavProcess } from './process.js';
import { segments } from './text.js';
import { FESTIVAL_CURATED } from './voice-table.js';
import { decodeFestivalOutput, FESTIVAL_WORDS_HOOK, festivalWordTimes } from './festival-words.js';
import { buildVoices } from './voices.js';
import { INTERACTIVE_NICE } from '../../lib/priority.js';

const execFileP = promisify(execFile);

/** Festival's language names → the API's two-letter codes (voices of other languages are not offered). */
const LANGUAGES: Record<string, TtsLanguage> = {
  english: { code: 'en', name: 'English' },
  catalan: { code: 'ca', name: 'Catalan' },
  czech: { code: 'cs', name: 'Czech' },
  finnish: { code: 'fi', name: 'Finnish' },
  hindi: { code: 'hi', name: 'Hindi' },
  italian: { code: 'it', name: 'Italian' },
  marathi: { code: 'mr', name: 'Marathi' },
  russian: { code: 'ru', name: 'Russian' },
  telugu: { code: 'te', name: 'Telugu' },
  spanish: { code: 'es', name: 'Spanish' },
  welsh: { code: 'cy', name: 'Welsh' },
  german: { code: 'de', name: 'German' },
  french: { code: 'fr', name: 'French' },
  polish: { code: 'pl', name: 'Polish' },
};

/** Native output rates of the Debian voices; text2wave resamples to the declared rate (-F) in any case. */
const NATIVE_RATES: Record<string, number> = {
  cmu_us_slt_arctic_hts: 32000,
  czech_dita: 32000,
  czech_krb: 32000,
  czech_machac: 32000,
  czech_ph: 44100,
  suo_fi_lj_diphone: 22050,
  hy_fi_mv_diphone: 22050,
};
const DEFAULT_RATE = 16000;

/** One line per voice: name, language, gender, coding (festival's own Scheme, printed by `festival --pipe`). */
const LIST_VOICES = `(mapcar (lambda (v) (let ((d (cadr (voice.description v)))) (format t "VOICE %s %s %s %s\\n" v (cadr (assoc 'language d)) (cadr (assoc 'gender d)) (cadr (assoc 'coding d))))) (voice.list))`;

export interface FestivalVoice extends EngineVoice {
  /** Festival's text coding for this voice (its lexicon and letter-to-sound rules read these bytes). */
  coding: string;
}

const singleByteTables = new Map<string, Map<string, number>>();

/** Character → byte for a single-byte coding, built from the platform's decoder (ICU), not hand-written. */
function singleByteTable(coding: string): Map<string, number> {
  let table = singleByteTables.get(coding);
  if (table) return table;
  table = new Map();
  // WHATWG decoders read "iso-8859-1" as windows-1252; festival's Latin-1 is the first 256 code points.
  let decoder: TextDecoder | undefined;
  if (coding !== 'iso-8859-1') {
    try {
      decoder = new TextDecoder(coding);
    } catch {
      decoder = undefined; // a coding the platform does not know: Latin-1
    }
  }
  for (let b = 0; b < 256; b++) {
    const ch = decoder ? decoder.decode(Uint8Array.of(b)) : String.fromCharCode(b);
    if (ch !== '\uFFFD' && !table.has(ch)) table.set(ch, b);
  }
  singleByteTables.set(coding, table);
  return table;
}

/**
 * The text as the voice's coding can carry it: characters the coding lacks fall back to their base letter
 * (NFKD: "ő" → "o"; typographic quotes → ASCII ones), else to a space.
 */
function representable(text: string, coding: string): string {
  const c = coding.toLowerCase().replace(/^utf8$/, 'utf-8');
  if (c === 'utf-8') return text;
  const table = singleByteTable(c);
  let out = '';
  for (const ch of text.normalize('NFC')) {
    if (table.has(ch)) {
      out += ch;
      continue;
    }
    const alt = ch === '\u2019' || ch === '\u2018' ? "'" : ch === '\u201c' || ch === '\u201d' ? '"' : ch.normalize('NFKD').charAt(0);
    out += table.has(alt) ? alt : ' ';
  }
  return out;
}

/** The bytes festival reads for `text` in a voice's coding (see representable). */
export function encodeForFestival(text: string, coding: string): Buffer {
  const c = coding.toLowerCase().replace(/^utf8$/, 'utf-8');
  const kept = representable(text, coding);
  if (c === 'utf-8') return Buffer.from(kept, 'utf8');
  const table = singleByteTable(c);
  return Buffer.from(Array.from(kept, (ch) => table.get(ch) ?? 0x20));
}

/**
 * What a voice can pronounce at all. The Indian voices read only their own script and digits (text in other
 * scripts alone crashes festival); every voice needs a letter or digit its coding carries.
 */
const SCRIPTS: Record<string, RegExp> = { hi: /[\u0900-\u097F\p{Nd}]/u, mr: /[\u0900-\u097F\p{Nd}]/u, te: /[\u0C00-\u0C7F\p{Nd}]/u };

export function festivalSpeaks(text: string, voice: Pick<FestivalVoice, 'coding' | 'languages'>): boolean {
  const script = SCRIPTS[voice.languages?.[0] ?? ''];
  if (script && !script.test(text)) return false;
  return /[\p{L}\p{N}]/u.test(representable(text, voice.coding));
}

function parseGender(g: string | undefined): Gender {
  return g === 'female' ? 'female' : g === 'male' ? 'male' : 'neutral';
}

export class FestivalEngine implements TtsEngine {
  readonly name = 'festival';
  readonly supportsSpeed = true;
  readonly supportsTimestamps = true;
  languages: TtsLanguage[] = [];
  voices: FestivalVoice[] = [];

  constructor(
    private readonly bin = 'text2wave',
    private readonly festivalBin = 'festival',
  ) {}

  async available(): Promise<boolean> {
    return (await commandExists(this.bin, ['-h'])) && (await commandExists(this.festivalBin, ['--version']));
  }

  /** Read the installed voices and their languages from festival. */
  async init(): Promise<this> {
    let stdout = '';
    try {
      const child = execFileP(this.festivalBin, ['--pipe'], { timeout: 30_000 });
      child.child.stdin?.on('error', () => undefined); // festival gone before reading: its exit status tells
      child.child.stdin?.end(LIST_VOICES);
      stdout = (await child).stdout;
    } catch {
      return this; // festival cannot list its voices: no voice, so the model is not offered
    }
    const langs = new Map<string, TtsLanguage>();
    for (const line of stdout.split('\n')) {
      const [tag, id, language, gender, coding] = line.trim().split(/\s+/);
      if (tag !== 'VOICE' || !id || !/^[A-Za-z0-9_]+$/.test(id)) continue;
      const lang = LANGUAGES[language?.toLowerCase() ?? ''];
      if (!lang) continue; // a language the API has no code for here
      langs.set(lang.code, lang);
      this.voices.push({
        id,
        gender: parseGender(gender),
        languages: [lang.code],
        sampleRate: NATIVE_RATES[id] ?? DEFAULT_RATE,
        coding: coding && coding !== 'nil' ? coding : 'ISO-8859-1',
      });
    }
    this.languages = [...langs.values()].sort((a, b) => a.code.localeCompare(b.code));
    return this;
  }

  speaks(text: string, voice: string): boolean {
    const v = this.voices.find((x) => x.id === voice);
    return !v || festivalSpeaks(text, v);
  }

  async *synthesize(text: AsyncIterable<string> | string, voice: string, _language: string, opts: SynthesisOptions = {}): AsyncGenerator<SynthesisChunk> {
    const v = this.voices.find((x) => x.id === voice);
    if (!v) throw new Error(`festival voice ${voice} is not installed`);
    const speed = opts.speed ?? 1;
    const rateControl = voice.endsWith('_hts')
      ? // HTS voices ignore Duration_Stretch; the HTS engine takes a speech rate ("-r").
        [`(set! hts_engine_params (append hts_engine_params (list (list "-r" ${speed.toFixed(3)}))))`]
      : voice.endsWith('_clunits')
        ? []
        : [`(Parameter.set 'Duration_Stretch ${(1 / speed).toFixed(3)})`];
    const tempo = voice.endsWith('_clunits') && Math.abs(speed - 1) > 0.005 ? `atempo=${speed.toFixed(3)}` : undefined;
    // Word times: festival prints its own (festival-words.ts).
    const words = opts.wordTimings ? ['-eval', FESTIVAL_WORDS_HOOK] : [];
    const args = ['-o', OUT_FILE, '-F', String(v.sampleRate), '-eval', `(voice_${voice})`, ...rateControl.flatMap((e) => ['-eval', e]), ...words];
    for await (const seg of segments(text)) {
      // A segment the voice cannot pronounce (another script, only symbols) is silent, not a failure.
      if (!festivalSpeaks(seg, v)) {
        yield { pcm: Buffer.alloc(0), sampleRate: v.sampleRate, text: seg };
        continue;
      }
      const out = await runWavProcess(this.bin, args, { stdin: encodeForFestival(seg, v.coding), signal: opts.signal, emptyOk: true });
      let pcm = out.pcm;
      // Cluster-unit voices play their recorded units at their own pace: change the tempo, keep the pitch.
      if (tempo && pcm.length)
        pcm = await decodeToBuffer(Readable.from([pcm]), {
          rawInputRate: v.sampleRate,
          sampleRate: v.sampleRate,
          filter: tempo,
          signal: opts.signal,
          nice: INTERACTIVE_NICE,
        });
      const timed = opts.wordTimings && out.stdout ? festivalWordTimes(seg, decodeFestivalOutput(out.stdout, v.coding), tempo ? 1 / speed : 1) : undefined;
      yield { pcm, sampleRate: v.sampleRate, text: seg, ...(timed ? { words: timed } : {}) };
    }
  }
}

/** Festival's model: the curated voices of the festvox packages installed here, each speaking its one language. */
export const festivalTtsEngine: TtsEngineDescriptor = {
  family: 'tts',
  id: 'festival',
  models: ['parlance-tts-festival-v1'],
  async build({ wanted }) {
    const festival = new FestivalEngine();
    if (!wanted('parlance-tts-festival-v1') || !(await festival.available())) return [];
    await festival.init();
    const voices = buildVoices(festival, FESTIVAL_CURATED, true);
    const name = `Parlance TTS v1 (festival: ${festival.languages.map((l) => l.name).join(', ')})`;
    return voices.length ? [{ id: 'parlance-tts-festival-v1', name, engine: festival, voices, supportsSilenceReduction: false }] : [];
  },
};
