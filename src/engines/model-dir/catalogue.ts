// The built-in catalogue of `parlance models pull NAME`: public sherpa-onnx release archives (and single .onnx files
// for speaker embeddings) with what the manifest needs. A checksum is listed only where it was found pinned, with the
// same size, by several independent projects; the others are computed on download and shown. Sizes are the download
// in MB (decimal), approximate. A JSON file (PARLANCE_MODELS_CATALOGUE) can add entries, change them, or point the
// release URLs at a mirror.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { FamilySchema } from './manifest.js';
import { PullError } from './pull-error.js';

export const RELEASES = 'https://github.com/k2-fsa/sherpa-onnx/releases/download';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

const EntrySchema = Type.Object(
  {
    /** What `models pull NAME` takes. */
    name: Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]*$' }),
    title: Type.String({ minLength: 1 }),
    url: Type.String({ pattern: '^https?://' }),
    family: FamilySchema,
    type: Type.String({ minLength: 1 }),
    languages: Type.Array(Type.String({ pattern: '^[a-z]{2,3}$' }), { minItems: 1 }),
    /** Approximate download size, MB (with the extras). */
    size_mb: Type.Optional(Type.Number({ minimum: 0 })),
    /** Public model id of the installed model. */
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]*-v[0-9]+$' }),
    /** Public ids suggested for the model to take over; skipped when another model holds one. */
    aliases: Type.Optional(Type.Array(Type.String())),
    sha256: Type.Optional(Sha256),
    /** Roles whose file is known by name (used when the archive has it; others are found by name patterns). */
    files: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** Files downloaded beside the archive's (Matcha's vocoder is a separate release). */
    extras: Type.Optional(
      Type.Array(Type.Object({ url: Type.String({ pattern: '^https?://' }), sha256: Type.Optional(Sha256) }, { additionalProperties: false })),
    ),
    voices: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.Integer({ minimum: 0 }))),
  },
  { additionalProperties: false },
);

export type CatalogueEntry = Static<typeof EntrySchema>;

const asr = (file: string) => `${RELEASES}/asr-models/${file}`;
const kws = (file: string) => `${RELEASES}/kws-models/${file}`;
const tts = (file: string) => `${RELEASES}/tts-models/${file}`;
// (sic: the release tag is spelled this way upstream)
const speaker = (file: string) => `${RELEASES}/speaker-recongition-models/${file}`;

const KOKORO_EN_V019_VOICES = ['af', 'af_bella', 'af_nicole', 'af_sarah', 'af_sky', 'am_adam', 'am_michael', 'bf_emma', 'bf_isabella', 'bm_george', 'bm_lewis'];

/** Kitten nano's speaker ids in order (sherpa-onnx's model page): voices 2 to 5, male then female. */
const KITTEN_VOICES = [
  'expr-voice-2-m',
  'expr-voice-2-f',
  'expr-voice-3-m',
  'expr-voice-3-f',
  'expr-voice-4-m',
  'expr-voice-4-f',
  'expr-voice-5-m',
  'expr-voice-5-f',
];

/** The 99 languages multilingual Whisper tells apart (its tokenizer's language tokens, in their order). */
const WHISPER_LANGUAGES = (
  'en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk te fa lv bn sr az ' +
  'sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg ' +
  'as tt haw ln ha ba jw su'
).split(' ');

export const CATALOGUE: readonly CatalogueEntry[] = [
  // Offline recognition (async transcriptions).
  {
    name: 'whisper-tiny.en',
    title: 'OpenAI Whisper tiny.en',
    url: asr('sherpa-onnx-whisper-tiny.en.tar.bz2'),
    family: 'stt-offline',
    type: 'whisper',
    languages: ['en'],
    size_mb: 118,
    id: 'whisper-tiny-en-v1',
    sha256: '2bd6cf965c8bb3e068ef9fa2191387ee63a9dfa2a4e37582a8109641c20005dd',
  },
  {
    name: 'whisper-base.en',
    title: 'OpenAI Whisper base.en',
    url: asr('sherpa-onnx-whisper-base.en.tar.bz2'),
    family: 'stt-offline',
    type: 'whisper',
    languages: ['en'],
    size_mb: 209,
    id: 'whisper-base-en-v1',
    sha256: '475bc7052ce299c007f6d5d5407ba8601f819a2867f6eecee510ed17df581542',
  },
  {
    name: 'moonshine-tiny-en',
    title: 'Useful Sensors Moonshine Tiny (English, int8)',
    url: asr('sherpa-onnx-moonshine-tiny-en-int8.tar.bz2'),
    family: 'stt-offline',
    type: 'moonshine',
    languages: ['en'],
    size_mb: 108,
    id: 'moonshine-tiny-en-v1',
    sha256: 'd5fe6ec4334fef36255b2a4010412cad4c007e33103fec62fb5d17cad88086f2',
  },
  {
    name: 'moonshine-base-en',
    title: 'Useful Sensors Moonshine Base (English, int8)',
    url: asr('sherpa-onnx-moonshine-base-en-int8.tar.bz2'),
    family: 'stt-offline',
    type: 'moonshine',
    languages: ['en'],
    size_mb: 251,
    id: 'moonshine-base-en-v1',
    sha256: '21870cecaa2e44e4e2bf63e02d1072bed183ccd10284871353bd9d24dad14e5e',
  },
  {
    name: 'parakeet-tdt-0.6b-v2',
    title: 'NVIDIA Parakeet TDT 0.6B v2 (English, int8)',
    url: asr('sherpa-onnx-nemo-parakeet-tdt-0.6b-v2-int8.tar.bz2'),
    family: 'stt-offline',
    type: 'nemo-transducer',
    languages: ['en'],
    size_mb: 482,
    id: 'parakeet-tdt-0.6b-v2',
    aliases: ['stt-async-v4'],
    sha256: '157c157bc51155e03e37d2466522a3a737dd9c72bb25f36eb18912964161e1ad',
  },
  {
    name: 'sense-voice-2024-07-17',
    title: 'FunAudioLLM SenseVoice Small (Chinese, English, Japanese, Korean, Cantonese)',
    url: asr('sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17.tar.bz2'),
    family: 'stt-offline',
    type: 'sense-voice',
    languages: ['zh', 'en', 'ja', 'ko', 'yue'],
    size_mb: 1048,
    id: 'sense-voice-small-v1',
  },
  // Streaming recognition (real-time sessions).
  {
    name: 'zipformer-en-2023-06-26',
    title: 'icefall streaming Zipformer transducer (English, LibriSpeech, 320 ms chunks)',
    url: asr('sherpa-onnx-streaming-zipformer-en-2023-06-26.tar.bz2'),
    family: 'stt-streaming',
    type: 'transducer',
    languages: ['en'],
    size_mb: 310,
    id: 'zipformer-streaming-en-2023-06-26-v1',
    aliases: ['stt-rt-v4'],
    sha256: '639e25b578e9e997131402199419c13a941f8e4e198e2da1ce57dbf5cf401282',
  },
  // Published for keyword spotting, but a small general English recognizer (3.3M parameters, GigaSpeech, BPE-500).
  // The archive holds each file in fp32 and int8. The encoder is pinned to fp32: the int8 export of this encoder in
  // sherpa-onnx's "-mobile" archive aborts onnxruntime, and the archive's own int8 one has not been tried here. The
  // decoder is fp32, int8 the joiner, as sherpa-onnx's tests pair them. A copy without the fp32 encoder falls back to
  // the int8 one (pins apply when the file exists); its bpe.model gives the manifest's bpe vocabulary (roles.ts).
  {
    name: 'kws-zipformer-gigaspeech-3.3m',
    title: 'icefall streaming Zipformer transducer, 3.3M (English, GigaSpeech, 320 ms chunks)',
    url: kws('sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01.tar.bz2'),
    family: 'stt-streaming',
    type: 'transducer',
    languages: ['en'],
    // Estimated from its files (about 20 MB unpacked, most of it weights that bzip2 hardly shrinks).
    size_mb: 18,
    id: 'zipformer-gigaspeech-3m-streaming-en-v1',
    files: {
      encoder: 'encoder-epoch-12-avg-2-chunk-16-left-64.onnx',
      decoder: 'decoder-epoch-12-avg-2-chunk-16-left-64.onnx',
      joiner: 'joiner-epoch-12-avg-2-chunk-16-left-64.int8.onnx',
      tokens: 'tokens.txt',
    },
  },
  // Speech synthesis.
  {
    name: 'piper-en-amy-low',
    title: 'Piper Amy (English, US, low)',
    url: tts('vits-piper-en_US-amy-low.tar.bz2'),
    family: 'tts',
    type: 'vits',
    languages: ['en'],
    size_mb: 64,
    id: 'piper-en-amy-v1',
    voices: { Amy: 0 },
  },
  {
    name: 'piper-en-lessac-medium',
    title: 'Piper Lessac (English, US, medium)',
    url: tts('vits-piper-en_US-lessac-medium.tar.bz2'),
    family: 'tts',
    type: 'vits',
    languages: ['en'],
    size_mb: 64,
    id: 'piper-en-lessac-v1',
    voices: { Lessac: 0 },
  },
  {
    name: 'kokoro-en-v0_19',
    title: 'Kokoro-82M v0.19 (English, 11 voices)',
    url: tts('kokoro-en-v0_19.tar.bz2'),
    family: 'tts',
    type: 'kokoro',
    languages: ['en'],
    size_mb: 320,
    id: 'kokoro-en-0.19-v1',
    aliases: ['tts-rt-v2'],
    sha256: '912804855a04745fa77a30be545b3f9a5d15c4d66db00b88cbcd4921df605ac7',
    voices: Object.fromEntries(KOKORO_EN_V019_VOICES.map((v, i) => [v, i])),
  },
  {
    name: 'kitten-nano-en-v0_1-fp16',
    title: 'KittenTTS nano v0.1 (English, 8 voices, fp16)',
    url: tts('kitten-nano-en-v0_1-fp16.tar.bz2'),
    family: 'tts',
    type: 'kitten',
    languages: ['en'],
    size_mb: 25,
    id: 'kitten-nano-en-0.1-v1',
    voices: Object.fromEntries(KITTEN_VOICES.map((v, i) => [v, i])),
  },
  {
    name: 'matcha-en-ljspeech',
    title: 'icefall Matcha-TTS LJSpeech (English, US) with the Vocos 22 kHz vocoder',
    url: tts('matcha-icefall-en_US-ljspeech.tar.bz2'),
    family: 'tts',
    type: 'matcha',
    languages: ['en'],
    size_mb: 131,
    id: 'matcha-en-ljspeech-v1',
    files: { acoustic_model: 'model-steps-3.onnx' },
    extras: [{ url: `${RELEASES}/vocoder-models/vocos-22khz-univ.onnx`, sha256: '0574a135aa1db2de6e181050db2ec528496cacd4a4701fc5d7faf9f9804c0081' }],
  },
  // Spoken language identification (enable_language_identification): the multilingual Whisper tiny.
  {
    name: 'whisper-tiny-lid',
    title: 'OpenAI Whisper tiny (multilingual), language identification',
    url: asr('sherpa-onnx-whisper-tiny.tar.bz2'),
    family: 'language-id',
    type: 'whisper',
    languages: WHISPER_LANGUAGES,
    id: 'whisper-tiny-lid-v1',
  },
  // Speaker embeddings (one .onnx file each).
  {
    name: '3dspeaker-campplus-en',
    title: '3D-Speaker CAM++ (VoxCeleb, English)',
    url: speaker('3dspeaker_speech_campplus_sv_en_voxceleb_16k.onnx'),
    family: 'speaker-embedding',
    type: 'embedding',
    languages: ['en'],
    size_mb: 30,
    id: '3dspeaker-campplus-en-v1',
    sha256: '357a834f702b80161e5b981182c038e18553c1f2ca752ed6cec2052365d4129b',
  },
  {
    name: 'wespeaker-resnet34-en',
    title: 'WeSpeaker ResNet34 (VoxCeleb, English)',
    url: speaker('wespeaker_en_voxceleb_resnet34.onnx'),
    family: 'speaker-embedding',
    type: 'embedding',
    languages: ['en'],
    size_mb: 27,
    id: 'wespeaker-resnet34-en-v1',
    sha256: '5ef208a9da1453335308a6b6f4e6dfbd7e183a38b604de0a57664f45d257fe94',
  },
  {
    name: 'nemo-titanet-small-en',
    title: 'NVIDIA NeMo TitaNet small (English)',
    url: speaker('nemo_en_titanet_small.onnx'),
    family: 'speaker-embedding',
    type: 'embedding',
    languages: ['en'],
    size_mb: 40,
    id: 'nemo-titanet-small-en-v1',
    sha256: 'ad4a1802485d8b34c722d2a9d04249662f2ece5d28a7a039063ca22f515a789e',
  },
];

const OverrideSchema = Type.Union([
  Type.Array(Type.Record(Type.String(), Type.Unknown())),
  Type.Object(
    { base_url: Type.Optional(Type.String({ pattern: '^https?://' })), entries: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))) },
    { additionalProperties: false },
  ),
]);

/**
 * The built-in catalogue with the changes of `file` (a JSON array of entries, or `{"base_url", "entries"}`): an entry
 * with a known name changes only the fields it gives (a new url drops the old checksum and extras unless given),
 * one with a new name is added; `base_url` replaces the sherpa-onnx releases prefix of the built-in URLs.
 */
export function loadCatalogue(file?: string): CatalogueEntry[] {
  if (!file) return [...CATALOGUE];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new PullError(`the catalogue file ${file} is not readable JSON (${(err as Error).message})`);
  }
  if (!Value.Check(OverrideSchema, raw)) throw new PullError(`the catalogue file ${file} must hold an array of entries or {"base_url", "entries"}`);
  const { base_url: baseUrl, entries = [] } = Array.isArray(raw) ? { base_url: undefined, entries: raw } : raw;
  const byName = new Map(CATALOGUE.map((e) => [e.name, baseUrl ? rebase(e, baseUrl) : e]));
  for (const change of entries) {
    const old = byName.get(String(change.name));
    const merged: Record<string, unknown> = {
      ...(old && change.url && change.url !== old.url ? { ...old, sha256: undefined, extras: undefined } : old),
      ...change,
    };
    for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
    if (!Value.Check(EntrySchema, merged)) {
      const first = [...Value.Errors(EntrySchema, merged)][0]!;
      throw new PullError(`the catalogue file ${file}: entry ${JSON.stringify(change.name ?? null)}: ${first.path || 'the entry'} ${first.message}`);
    }
    byName.set(merged.name, merged);
  }
  return [...byName.values()];
}

function rebase(e: CatalogueEntry, baseUrl: string): CatalogueEntry {
  const swap = (u: string) => (u.startsWith(`${RELEASES}/`) ? `${baseUrl.replace(/\/+$/, '')}/${u.slice(RELEASES.length + 1)}` : u);
  return { ...e, url: swap(e.url), ...(e.extras ? { extras: e.extras.map((x) => ({ ...x, url: swap(x.url) })) } : {}) };
}

/** The entry called `name`, or whose URL's file is `name` (with or without its extension). */
export function findEntry(catalogue: readonly CatalogueEntry[], name: string): CatalogueEntry | undefined {
  const base = (u: string) => path.basename(new URL(u).pathname);
  return catalogue.find((e) => e.name === name) ?? catalogue.find((e) => base(e.url) === name || stripArchiveExt(base(e.url)) === name);
}

export function findEntryByUrl(catalogue: readonly CatalogueEntry[], url: string): CatalogueEntry | undefined {
  return catalogue.find((e) => e.url === url);
}

export function stripArchiveExt(file: string): string {
  return file.replace(/\.(tar\.bz2|tar\.gz|tgz|tar\.xz|tar|onnx)$/, '');
}
