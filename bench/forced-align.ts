// Forced alignment of English speech with its known words, by the built-in recognizer (pocketsphinx, through the
// project's addon): a one-sentence JSGF grammar (the words in order, pocketsphinx putting optional silence between
// them) over the Debian en-us acoustic model, so the search only decides where each word starts and ends (10 ms
// frames). Words the dictionary lacks are pronounced by espeak-ng (the recognizer's own g2p). For benchmarks only.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findAddon, loadAddon, type NativeAddon } from '../src/engines/stt/pocketsphinx/addon.js';
import { pronounce } from '../src/engines/stt/pocketsphinx/g2p.js';
import { defaultModelPaths } from '../src/engines/stt/pocketsphinx/options.js';

export interface AlignedWord {
  /** The word as the grammar spelled it (lowercase). */
  text: string;
  start_ms: number;
  end_ms: number;
}

let addon: NativeAddon | undefined;
let dictionary: Map<string, string> | undefined;

function cmudict(file: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^(\S+)\s+(.+)$/.exec(line.trim());
    if (m && !m[1]!.includes('(')) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** A word as the grammar and the dictionary spell it: lowercase letters and apostrophes. */
export function alignKey(word: string): string {
  return word.toLowerCase().replace(/[^a-z']/g, '');
}

/**
 * Where each of `words` is spoken in `pcm16k` (16 kHz mono s16le), in order; undefined when the recognizer found no
 * path through the whole sentence.
 */
export async function forceAlign(pcm16k: Buffer, words: readonly string[]): Promise<AlignedWord[] | undefined> {
  const paths = defaultModelPaths();
  addon ??= loadAddon(findAddon());
  dictionary ??= cmudict(paths.dict);
  const keys = words.map(alignKey).filter((k) => k.length > 0);
  const missing = [...new Set(keys.filter((k) => !dictionary!.has(k)))];
  const extra = missing.length ? await pronounce(missing) : new Map<string, string>();
  const base = path.join(tmpdir(), `parlance-align-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const dict = `${base}.dict`;
  const jsgf = `${base}.jsgf`;
  try {
    const entries = [...new Set(keys)].map((k) => `${k} ${dictionary!.get(k) ?? extra.get(k) ?? 'AH'}`);
    writeFileSync(dict, `${entries.join('\n')}\n`);
    writeFileSync(jsgf, `#JSGF V1.0;\ngrammar align;\npublic <sentence> = ${keys.join(' ')};\n`);
    const decoder = new addon.Decoder({ hmm: paths.hmm, dict, args: { '-jsgf': jsgf, '-remove_silence': 'no', '-beam': '1e-80', '-wbeam': '1e-60' } } as never);
    try {
      decoder.startStream();
      decoder.startUtt();
      decoder.processRaw(new Uint8Array(pcm16k.buffer, pcm16k.byteOffset, pcm16k.length & ~1), { fullUtt: true });
      decoder.endUtt();
      if (!decoder.hypothesis()) return undefined;
      const out = decoder
        .segments()
        .filter((s) => !/^<.*>$|^\[.*\]$/.test(s.word))
        .map((s) => ({ text: s.word.replace(/\(\d+\)$/, ''), start_ms: s.startFrame * 10, end_ms: (s.endFrame + 1) * 10 }));
      return out.length === keys.length ? out : undefined;
    } finally {
      decoder.free();
    }
  } finally {
    rmSync(dict, { force: true });
    rmSync(jsgf, { force: true });
  }
}
