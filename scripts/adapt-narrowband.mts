// Estimate the narrowband adaptation of Debian's en-us acoustic model (engines/stt/pocketsphinx/narrowband.ts): one
// MLLR transform of the model's means, from the *tuning* half of Debian's real 8 kHz recordings (Asterisk's US
// English prompts with their transcripts; test/real-speech.ts splitOf), so the held-out half stays unseen for the
// WER benchmark. sphinxtrain's bw collects the statistics and mllr_solve solves the transform, on features made by
// sphinx_fe from exactly the 16 kHz PCM the server decodes (src/audio/decode.ts).
//
// Usage: node --import tsx scripts/adapt-narrowband.mts [--out FILE] [--dir FOLDER]   (run by `make setup`; about a
// minute). --dir adapts to your own recordings instead: FOLDER holds them and a refs.tsv of `<file><TAB><reference>`
// lines (as `npm run bench -- wer --dir`), all of which are used.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeToPcm } from '../src/audio/decode.js';
import { defaultModelPaths } from '../src/engines/stt/pocketsphinx/options.js';
import { NARROWBAND_TRANSFORM_RELATIVE } from '../src/engines/stt/pocketsphinx/narrowband.js';
import { normalizeForScoring } from '../src/text/normalize.js';
import { asteriskEnClips, folderClips, splitOf } from '../test/real-speech.js';

const run = promisify(execFile);
const SPHINXTRAIN = '/usr/lib/sphinxtrain';
const root = path.resolve(import.meta.dirname, '..');
const outArg = process.argv.indexOf('--out');
const out = outArg > 0 ? path.resolve(process.argv[outArg + 1]!) : path.join(root, NARROWBAND_TRANSFORM_RELATIVE);

function fail(message: string): never {
  console.error(`adapt-narrowband: ${message}`);
  process.exit(1);
}

for (const tool of ['/usr/bin/sphinx_fe', '/usr/bin/pocketsphinx_mdef_convert', `${SPHINXTRAIN}/bw`, `${SPHINXTRAIN}/mllr_solve`])
  if (!existsSync(tool)) fail(`${tool} is missing: run \`make setup\` (Debian packages sphinxtrain, sphinxbase-utils, pocketsphinx)`);
const dirArg = process.argv.indexOf('--dir');
const clips = dirArg > 0 ? folderClips(path.resolve(process.argv[dirArg + 1]!)) : asteriskEnClips().filter((c) => splitOf(c.file) === 'tune');
if (clips.length === 0) fail('no recordings: install asterisk-core-sounds-en and asterisk-core-sounds-en-wav (`make setup`)');

const model = defaultModelPaths();
const work = mkdtempSync(path.join(tmpdir(), 'parlance-adapt-'));
try {
  // A working copy of the model with what sphinxtrain reads and pocketsphinx's distribution leaves out: a text
  // mdef and unquantized mixture weights (recovered from the quantized sendump).
  const hmm = path.join(work, 'hmm');
  mkdirSync(hmm);
  for (const f of ['means', 'variances', 'transition_matrices', 'noisedict', 'feat.params']) copyFileSync(path.join(model.hmm, f), path.join(hmm, f));
  await run('pocketsphinx_mdef_convert', ['-text', path.join(model.hmm, 'mdef'), path.join(hmm, 'mdef.txt')]);
  writeFileSync(path.join(hmm, 'mixture_weights'), mixtureWeightsFromSendump(readFileSync(path.join(model.hmm, 'sendump'))));

  // Utterances whose words are all in the dictionary (bw cannot align an unknown word), as 16 kHz raw PCM.
  const dictionary = new Set(
    readFileSync(model.dict, 'utf8')
      .split('\n')
      .map((l) => l.split(/\s+/)[0]),
  );
  const raw = path.join(work, 'raw');
  mkdirSync(raw);
  const kept: { id: string; words: string[] }[] = [];
  let next = 0;
  const decodeNext = async (): Promise<void> => {
    for (let i = next++; i < clips.length; i = next++) {
      const words = normalizeForScoring(clips[i]!.reference).split(/\s+/).filter(Boolean);
      if (words.length === 0 || words.some((w) => !dictionary.has(w))) continue;
      const chunks: Buffer[] = [];
      for await (const chunk of decodeToPcm(clips[i]!.file)) chunks.push(chunk);
      writeFileSync(path.join(raw, `u${i}.raw`), Buffer.concat(chunks));
      kept.push({ id: `u${i}`, words });
    }
  };
  await Promise.all([decodeNext(), decodeNext(), decodeNext(), decodeNext()]);
  kept.sort((a, b) => a.id.localeCompare(b.id));
  writeFileSync(path.join(work, 'fileids'), kept.map((k) => k.id).join('\n') + '\n');
  writeFileSync(path.join(work, 'transcription'), kept.map((k) => `<s> ${k.words.join(' ')} </s> (${k.id})`).join('\n') + '\n');

  const big = { cwd: work, maxBuffer: 64 << 20 };
  mkdirSync(path.join(work, 'mfc'), { recursive: true });
  await run(
    'sphinx_fe',
    [
      '-argfile',
      path.join(hmm, 'feat.params'),
      '-samprate',
      '16000',
      '-c',
      'fileids',
      '-di',
      'raw',
      '-do',
      'mfc',
      '-ei',
      'raw',
      '-eo',
      'mfc',
      '-raw',
      'yes',
      '-input_endian',
      'little',
    ],
    big,
  );
  await run(
    `${SPHINXTRAIN}/bw`,
    [
      '-hmmdir',
      hmm,
      '-moddeffn',
      path.join(hmm, 'mdef.txt'),
      '-ts2cbfn',
      '.ptm.',
      '-feat',
      '1s_c_d_dd',
      '-svspec',
      '0-12/13-25/26-38',
      '-cmn',
      'batch',
      '-agc',
      'none',
      '-dictfn',
      model.dict,
      '-fdictfn',
      path.join(hmm, 'noisedict'),
      '-ctlfn',
      'fileids',
      '-lsnfn',
      'transcription',
      '-cepdir',
      'mfc',
      '-accumdir',
      '.',
    ],
    big,
  );
  await run(
    `${SPHINXTRAIN}/mllr_solve`,
    ['-meanfn', path.join(hmm, 'means'), '-varfn', path.join(hmm, 'variances'), '-outmllrfn', 'mllr', '-accumdir', '.'],
    big,
  );
  mkdirSync(path.dirname(out), { recursive: true });
  copyFileSync(path.join(work, 'mllr'), `${out}.tmp`);
  renameSync(`${out}.tmp`, out);
  console.log(`adapt-narrowband: ${out} from ${kept.length} of ${clips.length} recordings`);
} catch (err) {
  fail(`could not estimate the transform: ${(err as Error).message.split('\n')[0]}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * sendump (pocketsphinx's quantized mixture weights) → sphinxtrain's float mixture_weights. sendump: length-prefixed
 * header strings up to an empty one, then (with no clustering) the codeword and senone counts and, per feature
 * stream and codeword, one byte per senone holding -log1.0001(weight) >> mixw_shift.
 */
function mixtureWeightsFromSendump(buf: Buffer): Buffer {
  let at = 0;
  const int = (): number => {
    const v = buf.readUInt32LE(at);
    at += 4;
    return v;
  };
  const header: Record<string, number> = {};
  for (;;) {
    const n = int();
    if (n === 0) break;
    const [key, value] = buf
      .subarray(at, at + n - 1)
      .toString('latin1')
      .split(/\s+/);
    if (key && value && /^\d+$/.test(value)) header[key] = Number(value);
    at += n;
  }
  if (header.cluster_count) throw new Error('clustered sendump files are not supported');
  const codewords = int();
  const senones = int();
  const streams = header.feature_count ?? 0;
  const shift = header.mixw_shift ?? 10;
  if (!streams || at + streams * codewords * senones > buf.length) throw new Error('sendump is truncated');
  const weights = new Float64Array(senones * streams * codewords);
  for (let f = 0; f < streams; f++)
    for (let c = 0; c < codewords; c++) for (let s = 0; s < senones; s++) weights[(s * streams + f) * codewords + c] = Math.pow(1.0001, -(buf[at++]! << shift));
  const body = Buffer.alloc(16 + weights.length * 4);
  body.writeUInt32LE(senones, 0);
  body.writeUInt32LE(streams, 4);
  body.writeUInt32LE(codewords, 8);
  body.writeUInt32LE(weights.length, 12);
  for (let i = 0; i < weights.length; i += codewords) {
    let sum = 0;
    for (let c = 0; c < codewords; c++) sum += weights[i + c]!;
    for (let c = 0; c < codewords; c++) body.writeFloatLE(weights[i + c]! / sum, 16 + (i + c) * 4);
  }
  // sphinxtrain's binary header: "s3", attributes, "endhdr" padded so the data starts on a 4-byte boundary, then a
  // byte-order mark.
  let head = 's3\nversion 1.0\n';
  const pad = (head.length + 'endhdr\n'.length) & 3;
  head += (pad ? ' '.repeat(4 - pad) : '') + 'endhdr\n';
  const bom = Buffer.alloc(4);
  bom.writeInt32LE(0x11223344, 0);
  return Buffer.concat([Buffer.from(head, 'latin1'), bom, body]);
}
