// The live suite's endpoint mode (`--endpoints`): the conversation streamed once per model with
// `enable_endpoint_detection: true` and no finalize, as a client that lets the server decide where turns end. Scored:
//   - Endpoint after a clip: the first `<end>` that arrives after the piece holding the clip's last speech was sent
//     and before the next clip's speech was; the wait is from that send. A clip with none is missed.
//   - Endpoints inside a clip: `<end>`s arriving while its speech was being sent (pauses within a prompt or sentence
//     of at least the endpoint delay, or a wrong one).
//   - Final-token WER and lag as scoreStream counts them (live-score.ts): here every final comes from an endpoint.
import type { Conversation } from './live-conversation.js';
import { finalWer, type StreamScore } from './live-score.js';
import type { Recording } from './live-stream.js';
import { CHUNK_MS } from './realtime-stream.js';
import { round, type Row, summarize } from './lib.js';

const END = '<end>';

export interface EndpointScore {
  /** Per clip: ms from sending its speech's end to its `<end>` (null: missed). */
  afterSpeechMs: (number | null)[];
  /** `<end>`s that arrived while a clip's speech was being sent. */
  inside: number;
  /** All `<end>` markers. */
  ends: number;
}

export function scoreEndpoints(conversation: Conversation, rec: Recording): EndpointScore {
  const last = rec.pieceSentAt.length - 1;
  const sentUpTo = (ms: number) => rec.pieceSentAt[Math.max(0, Math.min(last, Math.ceil(ms / CHUNK_MS) - 1))]!;
  const endsAt = rec.frames.flatMap(({ at, frame }) => frame.tokens.filter((t) => t.text === END).map(() => at));
  const { turns } = conversation;
  let inside = 0;
  const afterSpeechMs = turns.map((t, i) => {
    const from = sentUpTo(t.speechEndMs);
    const until = i + 1 < turns.length ? sentUpTo(turns[i + 1]!.speechStartMs) : Infinity;
    inside += endsAt.filter((at) => at >= sentUpTo(t.speechStartMs) && at < from).length;
    const at = endsAt.find((x) => x >= from && x < until);
    return at === undefined ? null : at - from;
  });
  return { afterSpeechMs, inside, ends: endsAt.length };
}

/** The endpoint mode's rows for one model (final WER and lag from scoreStream of the same recording). */
export function endpointRows(label: string, stream: StreamScore, ep: EndpointScore, asyncWer: { wer: number } | undefined): Row[] {
  const found = ep.afterSpeechMs.filter((v): v is number => v !== null);
  const tag = `${label}, endpoint detection, 1 stream`;
  const wer = finalWer([stream]);
  const lag = stream.finalLagMs;
  const s = (v: number[]) => (v.length ? summarize(v) : undefined);
  return [
    {
      benchmark: `${tag}: <end> after each clip's speech ends (${found.length}/${ep.afterSpeechMs.length} clips; ${ep.inside} more inside clips, ${ep.ends} in all)`,
      result: found.length ? `p50 ${round(s(found)!.p50, 0)} ms, p95 ${round(s(found)!.p95, 0)} ms` : 'none',
      target: '— (report)',
      met: null,
    },
    {
      benchmark: `${tag}: final-token WER (every final from an endpoint)`,
      result: `${round(wer.wer * 100, 1)} % (${wer.errors}/${wer.words})`,
      target: '≤ async + 0.5 points',
      met: asyncWer ? wer.wer <= asyncWer.wer + 0.005 : null,
    },
    {
      benchmark: `${tag}: final-token lag after the word's end was sent`,
      result: lag.length ? `p50 ${round(s(lag)!.p50, 0)} ms, p95 ${round(s(lag)!.p95, 0)} ms` : 'none',
      target: 'p50 ≤ 600 ms, p95 ≤ 1,000 ms',
      met: lag.length > 0 && s(lag)!.p50 <= 600 && s(lag)!.p95 <= 1000,
    },
  ];
}
