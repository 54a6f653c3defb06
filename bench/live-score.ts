// The figures of one recorded live conversation (live-stream.ts). Times are the client's: a token's audio "was sent"
// when the 20 ms piece holding its end_ms went out.
//   - Each clip's hypothesis: the final tokens whose start_ms lies in the clip's audio, or within ATTRIBUTION_MS of
//     it (the nearest clip wins), joined as the SDKs join them. Final words near no clip are insertions of the stream.
//   - First token: from sending the piece where a clip's speech starts to the first frame with a token (final or
//     not) of that clip. Also that token's arrival after its own end_ms was sent (how far past the earliest moment).
//   - Non-final lag: for each non-final word as it first appeared, from sending its end_ms to that frame. A token is
//     new when no earlier non-final token had its text over an overlapping span: a word re-sent with other timings
//     (the decoder moving its end once the next word starts, or the streaming words re-sent while a second pass runs)
//     appeared before, and is counted apart as a re-timing.
//   - Final lag: for each final token, from sending its end_ms to the frame that carried it.
//   - Finalize → final: from sending a finalize to the frame with its `<fin>` marker (markers answer in order).
//   - Kept up: the finished frame within KEPT_UP_MS of the end frame, total_audio_proc_ms = the audio sent, no error.
import { werOf } from '../test/real-speech.js';
import type { SttToken } from '../src/wire/stt-frames.js';
import type { Conversation, Turn } from './live-conversation.js';
import type { Recording } from './live-stream.js';
import { CHUNK_MS } from './realtime-stream.js';

/** Half the gap between clips: a token starting in the gap belongs to the nearer clip. */
export const ATTRIBUTION_MS = 500;
export const KEPT_UP_MS = 2000;
/** total_audio_proc_ms may differ from the audio sent by resampling's rounding. */
const AUDIO_MS_SLACK = 40;
const FIN = '<fin>';

export interface TurnScore {
  file: string;
  reference: string;
  hypothesis: string;
  /** The clip's non-final words in the last frame that showed any: what the final tokens replaced. */
  lastNonFinal: string;
  firstTokenMs: number | null;
  firstTokenOverOwnEndMs: number | null;
  finalizeMs: number | null;
  /** Final tokens of this clip that came after its `<fin>` (which promises everything before it is final). */
  finalAfterFin: number;
  /** Frames with final words of this clip before its finalize was sent: utterances the server closed itself (at a
   * pause, or at the max_non_final_tokens_duration_ms bound). */
  closedBeforeFinalize: number;
}

export interface StreamScore {
  turns: TurnScore[];
  /** Final words that start near no clip. */
  unattributedFinal: string;
  nonFinalLagMs: number[];
  /** The word of each non-final lag (same order), to pair the words of two streams of the same audio. */
  nonFinalWords: { text: string; startMs: number; endMs: number }[];
  /** Non-final tokens that re-sent a word already shown with other timings. */
  nonFinalRetimed: number;
  finalLagMs: number[];
  finalizes: number;
  finalizesAnswered: number;
  audioMs: number;
  totalAudioProcMs: number | null;
  finishAfterEndMs: number | null;
  keptUp: boolean;
  error?: string;
}

/** The clip a token starting at `ms` belongs to, or -1. */
function turnOf(turns: Turn[], ms: number): number {
  let best = -1;
  let bestDistance = ATTRIBUTION_MS;
  turns.forEach((t, i) => {
    const d = ms < t.startMs ? t.startMs - ms : ms >= t.endMs ? ms - t.endMs : 0;
    if (d <= bestDistance) [best, bestDistance] = [i, d];
  });
  return best;
}

const isWord = (t: SttToken): t is SttToken & { start_ms: number; end_ms: number } => t.start_ms !== undefined && t.end_ms !== undefined;

export function scoreStream(conversation: Conversation, rec: Recording): StreamScore {
  const { turns } = conversation;
  const last = rec.pieceSentAt.length - 1;
  /** When the piece holding audio [ms - 1, ms) went out. */
  const sentUpTo = (ms: number) => rec.pieceSentAt[Math.max(0, Math.min(last, Math.ceil(ms / CHUNK_MS) - 1))]!;
  const pieceAt = (ms: number) => rec.pieceSentAt[Math.max(0, Math.min(last, Math.floor(ms / CHUNK_MS)))]!;

  const finals: string[][] = turns.map(() => []);
  const finalAt: number[][] = turns.map(() => []);
  const finalFrames: Set<number>[] = turns.map(() => new Set());
  const unattributed: string[] = [];
  const lastNonFinal: string[] = turns.map(() => '');
  const first: ({ at: number; endMs: number } | null)[] = turns.map(() => null);
  const seenNonFinal = new Set<string>();
  const shownWords: { text: string; start: number; end: number }[] = [];
  let nonFinalRetimed = 0;
  const nonFinalLagMs: number[] = [];
  const nonFinalWords: StreamScore['nonFinalWords'] = [];
  const finalLagMs: number[] = [];
  const finAt: number[] = [];
  let finished: { at: number; total: number } | undefined;
  let error: string | undefined;

  for (const { at, frame } of rec.frames) {
    if (frame.error_type) error = `${frame.error_type}: ${frame.error_message}`;
    const shown: string[][] = turns.map(() => []);
    for (const t of frame.tokens) {
      if (t.text === FIN) finAt.push(at);
      if (!isWord(t)) continue;
      const turn = turnOf(turns, t.start_ms);
      if (turn >= 0 && first[turn] === null) first[turn] = { at, endMs: t.end_ms };
      if (t.is_final) {
        finalLagMs.push(at - sentUpTo(t.end_ms));
        if (turn >= 0) {
          finals[turn]!.push(t.text);
          finalAt[turn]!.push(at);
          finalFrames[turn]!.add(at);
        } else unattributed.push(t.text);
        continue;
      }
      if (turn >= 0) shown[turn]!.push(t.text);
      const key = `${t.text}@${t.start_ms}-${t.end_ms}`;
      if (seenNonFinal.has(key)) continue;
      seenNonFinal.add(key);
      const word = { text: t.text.trim().toLowerCase(), start: t.start_ms, end: t.end_ms };
      if (shownWords.some((w) => w.text === word.text && w.start < word.end && word.start < w.end)) nonFinalRetimed++;
      else {
        nonFinalLagMs.push(at - sentUpTo(t.end_ms));
        nonFinalWords.push({ text: word.text, startMs: t.start_ms, endMs: t.end_ms });
      }
      shownWords.push(word);
    }
    shown.forEach((words, i) => {
      if (words.length) lastNonFinal[i] = words.join('');
    });
    if (frame.finished) finished = { at, total: frame.total_audio_proc_ms ?? NaN };
  }

  const finishAfterEndMs = finished ? finished.at - rec.endSentAt : null;
  return {
    turns: turns.map((t, i) => {
      const f = first[i];
      const fin = finAt[i];
      return {
        file: t.clip.file,
        reference: t.clip.reference,
        hypothesis: finals[i]!.join(''),
        lastNonFinal: lastNonFinal[i]!,
        firstTokenMs: f ? f.at - pieceAt(t.speechStartMs) : null,
        firstTokenOverOwnEndMs: f ? f.at - sentUpTo(f.endMs) : null,
        finalizeMs: fin !== undefined && rec.finalizeSentAt[i] !== undefined ? fin - rec.finalizeSentAt[i] : null,
        finalAfterFin: fin === undefined ? 0 : finalAt[i]!.filter((at) => at > fin).length,
        closedBeforeFinalize: [...finalFrames[i]!].filter((at) => rec.finalizeSentAt[i] === undefined || at < rec.finalizeSentAt[i]).length,
      };
    }),
    unattributedFinal: unattributed.join(''),
    nonFinalLagMs,
    nonFinalWords,
    nonFinalRetimed,
    finalLagMs,
    finalizes: rec.finalizeSentAt.filter((x) => x !== undefined).length,
    finalizesAnswered: Math.min(finAt.length, rec.finalizeSentAt.length),
    audioMs: rec.audioMs,
    totalAudioProcMs: finished?.total ?? null,
    finishAfterEndMs,
    keptUp:
      !error &&
      !rec.timedOut &&
      finishAfterEndMs !== null &&
      finishAfterEndMs <= KEPT_UP_MS &&
      Math.abs((finished?.total ?? NaN) - rec.audioMs) <= AUDIO_MS_SLACK,
    ...(error ? { error } : {}),
  };
}

/** Word errors of the final tokens over every clip of the streams, plus their unattributed final words. */
export function finalWer(scores: StreamScore[]): ReturnType<typeof werOf> {
  return werOf(scores.flatMap((s) => [...s.turns.map((t) => ({ reference: t.reference, text: t.hypothesis })), { reference: '', text: s.unattributedFinal }]));
}
