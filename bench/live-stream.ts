// One live conversation over /transcribe-websocket as a voice-agent client (Pipecat) drives it: the default
// configuration with pcm_s16le 16 kHz mono, audio in 20 ms pieces at real-time pace on an absolute schedule (timer
// lateness does not add up; another payload, such as the conversation in a container from live-formats.ts, goes out
// on the same schedule), `{"type":"finalize"}` right after the piece that holds each clip's last sample (or, in the
// endpoint mode, endpoint detection on and no finalize), and the empty frame after the last piece. Records when each piece, finalize and the end went out and when each frame came
// in (performance.now()); live-score.ts turns that into the figures.
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { SttReceivedFrame } from '../src/wire/stt-frames.js';
import type { Conversation } from './live-conversation.js';
import { type Payload, pcmPayload } from './live-formats.js';
import { BYTES_PER_MS, CHUNK_MS } from './realtime-stream.js';

/** How long after the end frame the finished frame may take before the stream is given up (and counted not kept up). */
const FINISH_TIMEOUT_MS = 60_000;

export interface Recording {
  /** Send time of piece k (audio [20k, 20k + 20) ms); piece 0 is the stream's time origin. */
  pieceSentAt: number[];
  /** Send time of each turn's finalize. */
  finalizeSentAt: number[];
  endSentAt: number;
  /** Audio sent, ms. */
  audioMs: number;
  frames: { at: number; frame: SttReceivedFrame }[];
  /** No finished frame within FINISH_TIMEOUT_MS of the end frame. */
  timedOut: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function streamConversation(
  wsUrl: string,
  apiKey: string,
  model: string,
  conversation: Conversation,
  payload: Payload = pcmPayload(conversation),
  /** `endpoints`: endpoint detection on and no finalize (the server decides where turns end). */
  how: { endpoints?: boolean } = {},
): Promise<Recording> {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const frames: Recording['frames'] = [];
  let failed = false;
  const done = new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      const at = performance.now();
      const frame = JSON.parse((data as Buffer).toString('utf8')) as SttReceivedFrame;
      frames.push({ at, frame });
      if (frame.error_type) failed = true;
      if (frame.finished || frame.error_type) resolve();
    });
    ws.on('close', () => resolve());
  });
  ws.send(JSON.stringify({ api_key: apiKey, model, ...payload.config, ...(how.endpoints ? { enable_endpoint_detection: true } : {}) }));

  const pieceBytes = CHUNK_MS * BYTES_PER_MS;
  const pieces = payload.pieces.length;
  /** Piece index → the turn whose last sample it holds. */
  const finalizeAfter = new Map(conversation.turns.map((t, i) => [Math.ceil((t.endMs * BYTES_PER_MS) / pieceBytes) - 1, i]));
  const pieceSentAt: number[] = [];
  const finalizeSentAt: number[] = [];
  for (let k = 0; k < pieces && !failed; k++) {
    if (k > 0) {
      const wait = pieceSentAt[0]! + k * CHUNK_MS - performance.now();
      if (wait > 0) await sleep(wait);
    }
    // An empty message would end the stream: a piece with no bytes is not sent (its time is still the schedule's).
    if (payload.pieces[k]!.length) ws.send(payload.pieces[k]!);
    pieceSentAt.push(performance.now());
    const turn = how.endpoints ? undefined : finalizeAfter.get(k);
    if (turn !== undefined) {
      ws.send(JSON.stringify({ type: 'finalize' }));
      finalizeSentAt[turn] = performance.now();
    }
  }
  const endSentAt = performance.now();
  ws.send('');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([done.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), FINISH_TIMEOUT_MS)))]);
  clearTimeout(timer);
  ws.close();
  return {
    pieceSentAt,
    finalizeSentAt,
    endSentAt,
    audioMs: Math.min(pieceSentAt.length * pieceBytes, conversation.pcm.length) / BYTES_PER_MS,
    frames,
    timedOut,
  };
}
