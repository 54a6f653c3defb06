// Speaker features gathered by turns: every speech frame goes to the speaker whose turn holds its centre (frames
// between turns go nowhere); without turns, every speech frame is speaker 0's (one voice: an enrolment sample).
// Runs where the frames are made (the diarization worker thread).
import type { SpeakerTurn, VoicePrint } from './interface.js';
import { SpeakerStats } from './speaker-stats.js';
import { FRAME_MS, type SpeakerFrame } from './speech-frames.js';
import { printOfStats } from './voice-print.js';

/** Half a feature frame (25 ms), ms: a frame's centre is index * FRAME_MS + this. */
const FRAME_CENTRE_MS = 12.5;

export class TurnStats {
  private readonly speakers = new Map<number, SpeakerStats>();
  private readonly turns: SpeakerTurn[] | undefined;
  private next = 0;

  constructor(turns?: readonly SpeakerTurn[]) {
    this.turns = turns ? [...turns].sort((a, b) => a.startMs - b.startMs) : undefined;
  }

  /** Frames in time order. */
  add(frames: SpeakerFrame[]): void {
    for (const f of frames) {
      const speaker = this.speakerOf(f.index * FRAME_MS + FRAME_CENTRE_MS);
      if (speaker === undefined) continue;
      let s = this.speakers.get(speaker);
      if (!s) this.speakers.set(speaker, (s = new SpeakerStats()));
      s.add(f);
    }
  }

  private speakerOf(ms: number): number | undefined {
    const turns = this.turns;
    if (!turns) return 0;
    while (this.next < turns.length && turns[this.next]!.endMs <= ms) this.next++;
    const t = turns[this.next];
    return t && t.startMs <= ms ? t.speaker : undefined;
  }

  prints(): [number, VoicePrint][] {
    return [...this.speakers].map(([speaker, stats]) => [speaker, printOfStats(stats)]);
  }
}
