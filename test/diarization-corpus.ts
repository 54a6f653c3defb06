// Multi-speaker conversations with known turn boundaries, built by concatenating real recordings of different
// people (Debian packages, see scripts/debian-packages.txt) or flite voices, for diarization tests and the DER
// benchmark. Every clip is decoded to 16 kHz mono PCM and trimmed to its speech (10 ms frames above 3 % of the
// clip's loudest); the reference turn is exactly the trimmed clip, and the pauses between turns are silence.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ASTERISK = '/usr/share/asterisk/sounds';
const TESTDATA = '/usr/share/pocketsphinx/test/data';

export interface CorpusSpeaker {
  name: string;
  /** Where the recordings come from (for the benchmark write-up). */
  source: string;
  clips: string[];
}

/** Real speakers: three professional IVR voices (8 kHz telephone prompts) and a LibriVox audiobook reader. */
export function realSpeakers(): CorpusSpeaker[] {
  const asterisk = (dir: string, name: string, source: string): CorpusSpeaker | undefined => {
    const full = path.join(ASTERISK, dir);
    if (!existsSync(full)) return undefined;
    // Prompts of 1.5–6 s: long enough to be a conversational turn. Sorted for a stable order.
    const clips = readdirSync(full)
      .filter((f) => f.endsWith('.wav'))
      .map((f) => path.join(full, f))
      .filter((f) => statSync(f).size >= 24_000 && statSync(f).size <= 96_000)
      .sort();
    return { name, source, clips };
  };
  const librivox = path.join(TESTDATA, 'librivox');
  const out = [
    asterisk('en_US_f_Allison', 'allison', 'asterisk-core-sounds-en-wav (US English prompts, Allison Smith)'),
    asterisk('fr_CA_f_June', 'june', 'asterisk-core-sounds-fr-wav (Canadian French prompts, June Wallack)'),
    asterisk('ru_RU_f_IvrvoiceRU', 'ivrvoice-ru', 'asterisk-core-sounds-ru-wav (Russian prompts)'),
    existsSync(librivox)
      ? {
          name: 'librivox',
          source: 'pocketsphinx-testdata (LibriVox reading of Sense and Sensibility)',
          clips: readdirSync(librivox)
            .filter((f) => f.endsWith('.wav'))
            .map((f) => path.join(librivox, f))
            .sort(),
        }
      : undefined,
  ];
  return out.filter((s): s is CorpusSpeaker => s !== undefined && s.clips.length > 0);
}

/** s16le 16 kHz mono of any audio file, via ffmpeg. */
export function decodeFile(file: string): Int16Array {
  const raw = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 's16le', '-ac', '1', '-ar', '16000', '-'], { maxBuffer: 1 << 28 });
  return new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2).slice();
}

/** The clip cut to its speech: from the first to the last 10 ms frame above 3 % of the loudest frame's RMS. */
export function trimToSpeech(pcm: Int16Array): Int16Array {
  const hop = 160;
  const rms: number[] = [];
  for (let i = 0; i + hop <= pcm.length; i += hop) {
    let s = 0;
    for (let j = i; j < i + hop; j++) s += pcm[j]! * pcm[j]!;
    rms.push(Math.sqrt(s / hop));
  }
  const floor = Math.max(...rms, 1) * 0.03;
  const first = rms.findIndex((v) => v >= floor);
  let last = rms.length - 1;
  while (last > first && rms[last]! < floor) last--;
  return first < 0 ? new Int16Array(0) : pcm.slice(first * hop, (last + 1) * hop);
}

export interface ReferenceTurn {
  startMs: number;
  endMs: number;
  speaker: string;
  /** The recording the turn is (trimmed to its speech). */
  clip: string;
}

export interface Conversation {
  pcm: Int16Array;
  turns: ReferenceTurn[];
  durationMs: number;
}

/** Small deterministic PRNG (mulberry32) so a conversation is the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ConversationOptions {
  /** Number of turns (default 12). */
  turns?: number;
  seed?: number;
  /** Pause between turns, ms (uniform in [min, max]; default 300–900). */
  pauseMs?: [number, number];
}

/**
 * Turns alternate between the given speakers in a random order (never the same speaker twice in a row), each turn
 * one unused clip of that speaker; every speaker speaks at least once.
 */
export function buildConversation(speakers: CorpusSpeaker[], options: ConversationOptions = {}): Conversation {
  const rand = seededRandom(options.seed ?? 1);
  const [pauseMin, pauseMax] = options.pauseMs ?? [300, 900];
  const nTurns = Math.max(options.turns ?? 12, speakers.length);
  const used = speakers.map(() => new Set<number>());
  const pieces: Int16Array[] = [];
  const turns: ReferenceTurn[] = [];
  let at = 0;
  let prev = -1;
  for (let t = 0; t < nTurns; t++) {
    // The first round visits every speaker once, then random order.
    let s = t < speakers.length ? t : Math.floor(rand() * speakers.length);
    if (s === prev) s = (s + 1 + Math.floor(rand() * (speakers.length - 1))) % speakers.length;
    prev = s;
    const sp = speakers[s]!;
    if (used[s]!.size >= sp.clips.length) used[s]!.clear();
    let c = Math.floor(rand() * sp.clips.length);
    while (used[s]!.has(c)) c = (c + 1) % sp.clips.length;
    used[s]!.add(c);
    const clip = trimToSpeech(decodeFile(sp.clips[c]!));
    const pause = new Int16Array(Math.round(((pauseMin + rand() * (pauseMax - pauseMin)) / 1000) * 16_000));
    if (t > 0) {
      pieces.push(pause);
      at += pause.length;
    }
    turns.push({ startMs: (at / 16_000) * 1000, endMs: ((at + clip.length) / 16_000) * 1000, speaker: sp.name, clip: sp.clips[c]! });
    pieces.push(clip);
    at += clip.length;
  }
  const pcm = new Int16Array(at);
  let o = 0;
  for (const p of pieces) {
    pcm.set(p, o);
    o += p.length;
  }
  return { pcm, turns, durationMs: (at / 16_000) * 1000 };
}

/** WAV (s16le 16 kHz mono) bytes of PCM, for uploads. */
export function wavBytes(pcm: Int16Array): Buffer {
  const data = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVEfmt ', 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(16_000, 24);
  h.writeUInt32LE(32_000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}
