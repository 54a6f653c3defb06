// The manifest of a model a user brings (`<models dir>/<folder>/parlance-model.json`): what kind of model it is, which
// files make it, and the public ids it answers to. Parsed and checked at start-up, so that a broken manifest, a
// missing file or an .onnx file that is no whole model (onnx-file.ts) stops the start with a message naming the file
// and the fix, instead of failing jobs later.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { onnxProblem } from './onnx-file.js';

export const MANIFEST_FILE = 'parlance-model.json';

/** sherpa-onnx model types by family, and the files each needs (other keys in `files` are optional extras). */
export const MODEL_TYPES = {
  'stt-offline': {
    whisper: ['encoder', 'decoder', 'tokens'],
    moonshine: ['preprocessor', 'encoder', 'uncached_decoder', 'cached_decoder', 'tokens'],
    'nemo-ctc': ['model', 'tokens'],
    'nemo-transducer': ['encoder', 'decoder', 'joiner', 'tokens'],
    transducer: ['encoder', 'decoder', 'joiner', 'tokens'],
    paraformer: ['model', 'tokens'],
    'sense-voice': ['model', 'tokens'],
    'zipformer-ctc': ['model', 'tokens'],
  },
  'stt-streaming': {
    transducer: ['encoder', 'decoder', 'joiner', 'tokens'],
    paraformer: ['encoder', 'decoder', 'tokens'],
    'zipformer2-ctc': ['model', 'tokens'],
  },
  tts: {
    vits: ['model', 'tokens'],
    matcha: ['acoustic_model', 'vocoder', 'tokens'],
    kokoro: ['model', 'voices', 'tokens'],
    kitten: ['model', 'voices', 'tokens'],
  },
  'speaker-embedding': {
    embedding: ['model'],
  },
  /** Spoken language identification: a multilingual Whisper encoder and decoder (no tokens needed). */
  'language-id': {
    whisper: ['encoder', 'decoder'],
  },
} as const satisfies Record<string, Record<string, readonly string[]>>;

export type ModelFamily = keyof typeof MODEL_TYPES;

/** Speech-to-text types whose models are a transducer (encoder, decoder, joiner), offline or streaming. */
export const TRANSDUCER_TYPES: ReadonlySet<string> = new Set(['transducer', 'nemo-transducer']);

const VERSIONED_ID = '^[a-z0-9][a-z0-9._-]*-v[0-9]+$';
/** What a model id and an alias must look like (the manifest's patterns). */
export const MODEL_ID_RE = new RegExp(VERSIONED_ID);
export const ALIAS_RE = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

/** A model family (MODEL_TYPES' keys), as manifests and catalogue entries name it. */
export const FamilySchema = Type.Union([
  Type.Literal('stt-offline'),
  Type.Literal('stt-streaming'),
  Type.Literal('tts'),
  Type.Literal('speaker-embedding'),
  Type.Literal('language-id'),
]);

export const ManifestSchema = Type.Object(
  {
    /** Public model id, version-suffixed like the built-in ones (`whisper-tiny-en-v1`). */
    id: Type.String({ pattern: VERSIONED_ID }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    family: FamilySchema,
    /** The sherpa-onnx model type within the family (MODEL_TYPES). */
    type: Type.String({ minLength: 1 }),
    /** Role → file name relative to the manifest's folder (or an absolute path). */
    files: Type.Record(Type.String(), Type.String({ minLength: 1 })),
    /** Languages recognised or spoken (ISO 639-1); for language-id, the languages it tells apart. */
    languages: Type.Array(Type.String({ pattern: '^[a-z]{2,3}$' }), { minItems: 1 }),
    /** Public ids this model takes over from the built-in engines (`stt-async-v4`, `tts-rt-v2`, ...). */
    aliases: Type.Optional(Type.Array(Type.String({ pattern: ALIAS_RE.source }))),
    /** Sample rate the model expects (STT) or produces (TTS); audio is converted to and from it. */
    sample_rate: Type.Optional(Type.Integer({ minimum: 8000, maximum: 48000 })),
    /** Decoder threads of ONNX Runtime per recognizer (default 1: the server runs several at once). */
    threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
    /**
     * Transducer STT, offline or streaming: how words split into the model's tokens (sherpa-onnx's modeling unit;
     * `bpe` needs files.bpe_vocab), so that context terms can be given to the model as hotwords.
     */
    modeling_unit: Type.Optional(Type.Union([Type.Literal('bpe'), Type.Literal('cjkchar'), Type.Literal('cjkchar+bpe')])),
    /** Offline STT: this model decodes each utterance of live sessions again for their final tokens. */
    second_pass: Type.Optional(Type.Boolean()),
    /** TTS: voice names by speaker id (default: one voice named after the model). */
    voices: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.Integer({ minimum: 0 }))),
  },
  { additionalProperties: false },
);

export type Manifest = Static<typeof ManifestSchema>;

/** A model folder's manifest with its files resolved to absolute paths. */
export interface InstalledModel extends Manifest {
  /** Folder holding the manifest. */
  dir: string;
  /** Absolute paths by role. */
  paths: Record<string, string>;
}

/** A model folder that cannot be used: the file at fault and what to do about it. */
export class ModelManifestError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${file}: ${problem} (${fix})`);
    this.name = 'ModelManifestError';
  }
}

/** Read and check one model folder's manifest and files. */
export function readManifest(dir: string): InstalledModel {
  const file = path.join(dir, MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ModelManifestError(file, `not readable JSON (${(err as Error).message})`, 'fix the JSON, or remove the folder');
  }
  if (!Value.Check(ManifestSchema, raw)) {
    const first = [...Value.Errors(ManifestSchema, raw)][0]!;
    const where = first.path ? `field ${first.path.slice(1).replace(/\//g, '.')}` : 'the manifest';
    const problem = first.path === '/id' ? 'must be lower case and end in a version, like whisper-tiny-en-v1' : first.message;
    throw new ModelManifestError(file, `${where}: ${problem}`, `see docs/guide/models.md for the manifest's fields`);
  }
  const manifest = raw;
  const types = MODEL_TYPES[manifest.family] as Record<string, readonly string[]>;
  const needed = types[manifest.type];
  if (!needed) {
    throw new ModelManifestError(file, `type "${manifest.type}" is not a ${manifest.family} model type`, `use one of: ${Object.keys(types).join(', ')}`);
  }
  // sherpa-onnx splits hotwords into BPE pieces with this file, and crashes without it.
  if (manifest.modeling_unit?.includes('bpe') && !manifest.files.bpe_vocab) {
    throw new ModelManifestError(
      file,
      `modeling_unit "${manifest.modeling_unit}" needs files.bpe_vocab`,
      'add the model\'s bpe.vocab as "bpe_vocab" to "files", or remove modeling_unit',
    );
  }
  const paths: Record<string, string> = {};
  for (const role of needed) {
    if (!manifest.files[role])
      throw new ModelManifestError(file, `files.${role} is missing (a ${manifest.type} model needs ${needed.join(', ')})`, `add "${role}" to "files"`);
  }
  for (const [role, name] of Object.entries(manifest.files)) {
    const p = path.resolve(dir, name);
    if (!existsSync(p)) throw new ModelManifestError(file, `files.${role}: ${name} does not exist`, `copy the file into ${dir}, or correct its name`);
    if (role !== 'data_dir' && !statSync(p).isFile()) throw new ModelManifestError(file, `files.${role}: ${name} is not a file`, 'name the file itself');
    const problem = /\.onnx$/i.test(name) ? onnxProblem(p) : undefined;
    if (problem) throw new ModelManifestError(file, `files.${role}: ${name} ${problem}`, 'replace it with a whole copy of the file');
    paths[role] = p;
  }
  return { ...manifest, dir, paths };
}
