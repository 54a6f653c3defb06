// The audio of each speaker's turns, for a speaker embedding of each voice: pieces of s16le PCM in, per speaker the
// samples inside its turns (or, without turns, all of them as speaker 0), up to `maxMs` each. Whole ranges are copied,
// never sample by sample.
import { S16leReader } from '../../audio/s16le.js';
import type { SpeakerTurn } from './interface.js';

const SAMPLES_PER_MS = 16;

export class TurnSamples {
  private readonly reader = new S16leReader();
  private readonly pieces = new Map<number, Int16Array[]>();
  private readonly held = new Map<number, number>();
  private readonly turns: SpeakerTurn[];
  private readonly cap: number;
  private at = 0;

  constructor(turns: readonly SpeakerTurn[] | undefined, maxMs: number) {
    this.turns = turns ? [...turns].sort((a, b) => a.startMs - b.startMs) : [{ startMs: 0, endMs: Infinity, speaker: 0 }];
    this.cap = maxMs * SAMPLES_PER_MS;
  }

  add(pcm: Uint8Array): void {
    const samples = this.reader.read(pcm);
    const from = this.at;
    const to = from + samples.length;
    this.at = to;
    for (const t of this.turns) {
      const lo = Math.max(from, Math.round(t.startMs * SAMPLES_PER_MS));
      const hi = Math.min(to, t.endMs === Infinity ? to : Math.round(t.endMs * SAMPLES_PER_MS));
      if (hi <= lo) continue;
      const held = this.held.get(t.speaker) ?? 0;
      const n = Math.min(hi - lo, this.cap - held);
      if (n <= 0) continue;
      let list = this.pieces.get(t.speaker);
      if (!list) this.pieces.set(t.speaker, (list = []));
      list.push(samples.subarray(lo - from, lo - from + n));
      this.held.set(t.speaker, held + n);
    }
  }

  /** Each speaker's samples, joined. */
  samples(): Map<number, Int16Array> {
    const out = new Map<number, Int16Array>();
    for (const [speaker, list] of this.pieces) {
      const all = new Int16Array(list.reduce((n, p) => n + p.length, 0));
      let o = 0;
      for (const p of list) {
        all.set(p, o);
        o += p.length;
      }
      out.set(speaker, all);
    }
    return out;
  }
}
