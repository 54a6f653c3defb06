// Which file of a model folder plays which role (tokens.txt, *encoder*.onnx, ...), found by name as sherpa-onnx's
// archives name them; int8 files preferred, as they decode faster on a CPU, except a transducer's decoder.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { MODEL_TYPES, type ModelFamily, TRANSDUCER_TYPES } from './manifest.js';
import { ProtobufError } from './protobuf.js';
import { PullError } from './pull-error.js';
import { writeBpeVocab } from './sentencepiece-vocab.js';

/** Name patterns of each file role, most specific first. */
const ROLE_PATTERNS: Record<string, RegExp> = {
  tokens: /tokens\.txt$/,
  encoder: /encoder?[^/]*\.onnx$/,
  decoder: /(?<!cached_|uncached_)decoder?[^/]*\.onnx$/,
  joiner: /joiner[^/]*\.onnx$/,
  preprocessor: /preprocess[^/]*\.onnx$/,
  uncached_decoder: /uncached_decode[^/]*\.onnx$/,
  cached_decoder: /(?<!un)cached_decode[^/]*\.onnx$/,
  model: /\.onnx$/,
  acoustic_model: /\.onnx$/,
  vocoder: /(vocos|hifigan|vocoder)[^/]*\.onnx$/,
  voices: /voices\.bin$/,
};

/**
 * The files a model type needs; a PullError naming the family's types when it has no such type, or naming the
 * type's roles when `chosen` (--file) has another.
 */
export function neededRoles(family: ModelFamily, type: string, chosen: Record<string, string> = {}): readonly string[] {
  const types = MODEL_TYPES[family] as Record<string, readonly string[]>;
  const needed = types[type];
  if (!needed) throw new PullError(`type "${type}" is not a ${family} model type; use one of: ${Object.keys(types).join(', ')}`);
  const other = Object.keys(chosen).find((r) => !needed.includes(r));
  if (other) throw new PullError(`--file ${other}=...: a ${type} model's files are ${needed.join(', ')}`);
  return needed;
}

/**
 * The manifest's `files` for the model in `dir`: each needed role (`chosen` names, given with --file, first; then
 * `pinned` names, a catalogue's, when that file exists), for speech synthesis the espeak-ng-data folder and a
 * lexicon.txt when there are, and for a transducer with a bpe.vocab or bpe.model its BPE vocabulary (bpe_vocab),
 * written from bpe.model when there is no bpe.vocab. A PullError says what `what` ("the archive", "the folder") lacks.
 */
export function findRoles(
  dir: string,
  family: ModelFamily,
  type: string,
  what: string,
  pinned: Record<string, string> = {},
  chosen: Record<string, string> = {},
): Record<string, string> {
  const needed = neededRoles(family, type, chosen);
  const files = readdirSync(dir).filter((f) => statSync(path.join(dir, f)).isFile());
  const absent = Object.values(chosen).filter((f) => !files.includes(f));
  if (absent.length) throw new PullError(`${what} has no ${absent.join(', ')} (files: ${files.join(', ') || 'none'})`);
  const roles = pickRoles(files, needed, type, { ...Object.fromEntries(Object.entries(pinned).filter(([, f]) => files.includes(f))), ...chosen });
  const missing = needed.filter((r) => !roles[r]);
  if (missing.length)
    throw new PullError(`${what} has no file for ${missing.join(', ')} (files: ${files.join(', ') || 'none'}); a ${type} model needs ${needed.join(', ')}`);
  if (family === 'tts') {
    if (existsSync(path.join(dir, 'espeak-ng-data', 'phontab'))) roles.data_dir = 'espeak-ng-data';
    if (files.includes('lexicon.txt')) roles.lexicon = 'lexicon.txt';
  }
  if (TRANSDUCER_TYPES.has(type) && (files.includes(BPE_VOCAB) || files.includes(BPE_MODEL))) {
    if (!files.includes(BPE_VOCAB)) deriveBpeVocab(dir, what);
    roles.bpe_vocab = BPE_VOCAB;
  }
  return roles;
}

const BPE_MODEL = 'bpe.model';
const BPE_VOCAB = 'bpe.vocab';

function deriveBpeVocab(dir: string, what: string): void {
  try {
    writeBpeVocab(path.join(dir, BPE_MODEL), path.join(dir, BPE_VOCAB));
  } catch (err) {
    if (err instanceof ProtobufError) throw new PullError(`${what}'s ${BPE_MODEL} is not a SentencePiece model (${err.message})`);
    throw err;
  }
}

/**
 * The file for each needed role: the int8 variant when there is one, else the shortest name that matches. A
 * transducer's decoder is the exception: it is small, so int8 gains little speed there and costs accuracy
 * (sherpa-onnx's model pages pair the fp32 decoder with int8 encoder and joiner).
 */
function pickRoles(files: string[], needed: readonly string[], type: string, pinned: Record<string, string>): Record<string, string> {
  const roles: Record<string, string> = {};
  const taken = new Set<string>();
  const take = (role: string, file: string) => {
    roles[role] = file;
    // The other precision of the same file is not a candidate for another role.
    for (const f of files) if (f.replace('.int8', '') === file.replace('.int8', '')) taken.add(f);
  };
  for (const [role, file] of Object.entries(pinned)) if (needed.includes(role)) take(role, file);
  // Specific roles before the catch-all "model".
  for (const role of [...needed].sort((a, b) => Number(a === 'model' || a === 'acoustic_model') - Number(b === 'model' || b === 'acoustic_model'))) {
    if (roles[role]) continue;
    const pattern = ROLE_PATTERNS[role] ?? new RegExp(`${role}[^/]*$`);
    const int8First = !(role === 'decoder' && TRANSDUCER_TYPES.has(type));
    const preferred = (f: string) => Number(f.includes('int8') === int8First);
    const candidates = files.filter((f) => pattern.test(f) && !taken.has(f)).sort((a, b) => preferred(b) - preferred(a) || a.length - b.length);
    if (candidates[0]) take(role, candidates[0]);
  }
  return roles;
}
