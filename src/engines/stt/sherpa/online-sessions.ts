// One streaming model (sherpa-onnx OnlineRecognizer, synchronous only) and the live sessions it serves, as a request
// handler run on a worker thread (online-worker.ts), or inline when there is no compiled worker. Each session is one
// stream of a recognizer, decoded chunk by chunk as its audio arrives; the words of the open utterance come back as
// partial results, and a pause (the session's endpoint rule), finalize or the end of the stream makes them final.
//
// A session keeps its stream for its whole life: the encoder's memory of earlier speech carries over utterances, as
// when the model decodes a whole recording. To close an utterance on demand (finalize) the words still inside the
// encoder's look-ahead are pushed out with silence, the way sherpa-onnx's examples pad the end of a file; that
// silence is not session audio, so its length is taken off the times of every later word. Times are ms from the
// session's first sample.
//
// Sherpa-onnx takes hotwords per recognizer for streaming models (not per stream): sessions with context terms get a
// recognizer of the same model built with those terms, kept while sessions use it.
//
// Audio of several sessions is decoded in batches: a session's audio is taken at once, and the sessions whose audio
// came in the same turn of the thread are decoded together on the next (one decodeStreams call per recognizer over
// the streams ready), so a busy thread decodes more streams per call instead of queueing calls.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type sherpaTypes from 'sherpa-onnx-node';
import { settledCount } from '../settled.js';
import { HOTWORDS_SCORE, tokenCase } from './hotwords.js';
import { pcmToFloat32, sherpa } from './load-sherpa.js';
import type { OnlineRecognizerConfig } from './online-config.js';
import type { OnlineEvent, OnlineReply, OnlineRequest } from './online-worker-messages.js';
import { resultWords } from './words.js';

interface Session {
  recognizer: Recognizer;
  stream: sherpaTypes.OnlineStream;
  /** Samples of session audio received. */
  samples: number;
  /** Silence fed to the stream that is not session audio (finalizations), ms: stream time − this = session time. */
  paddedMs: number;
  lastText: string;
  /** Start of the last word of the open utterance already made final by settle (ms); later words only are new. */
  settledFrom: number;
  /** Trailing silence after words that ends an utterance, ms (0: only the longest-utterance rule). */
  endpointMs: number;
  /** The model's trailing blanks end the open utterance (false while the VAD hears its speech and decides). */
  modelPauses: boolean;
  /** Words of the open utterance this far behind the audio (and not its last) turn final as it goes on (0: never). */
  settleMs: number;
}

interface Recognizer {
  native: sherpaTypes.OnlineRecognizer;
  /** "/"-separated hotwords it was built with ('' for none). */
  hotwords: string;
  sessions: number;
}

/** Encoder frame of sherpa's streaming transducers (its trailing-blank count is in these), ms. */
const FRAME_MS = 40;
/**
 * Silence that closes an utterance on demand: more than a chunk of the encoder plus its look-ahead (320 + 160 ms for
 * the 16-frame zipformers), so every word already spoken is decoded. Whole 20 ms pieces.
 */
const FLUSH_MS = 640;
const FLUSH = new Float32Array((16_000 * FLUSH_MS) / 1000);
/** Recognizers built for context terms and no longer used, kept for the next session with the same terms. */
const IDLE_HOTWORD_RECOGNIZERS = 2;

export type OnlineCall = OnlineRequest extends infer R ? (R extends OnlineRequest ? Omit<R, 'id'> : never) : never;

export function onlineHandler(): (req: OnlineCall) => OnlineReply | Promise<OnlineReply> {
  let config: OnlineRecognizerConfig | undefined;
  /** The model writes in capitals only. */
  let capitals = false;
  /** Its encoder decodes several streams in one call. */
  let batches = false;
  const recognizers = new Map<string, Recognizer>();
  const sessions = new Map<number, Session>();

  const session = (id: number): Session => {
    const s = sessions.get(id);
    if (!s) throw new Error(`no session ${id}`);
    return s;
  };

  const recognizerFor = (hotwords: string): Recognizer => {
    let r = recognizers.get(hotwords);
    if (!r) {
      r = { native: build(config!, hotwords), hotwords, sessions: 0 };
      recognizers.set(hotwords, r);
      // Idle hotword recognizers beyond the few kept are released (Map order: the oldest first).
      const idle = [...recognizers.values()].filter((x) => x.hotwords && x.sessions === 0 && x !== r);
      for (const x of idle.slice(0, Math.max(0, idle.length - IDLE_HOTWORD_RECOGNIZERS))) recognizers.delete(x.hotwords);
    }
    r.sessions++;
    return r;
  };

  const drop = (id: number): void => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    s.recognizer.sessions--;
  };

  /** The words of the stream's current segment not made final yet, on the session's clock. */
  const words = (s: Session, r: sherpaTypes.OnlineRecognizerResult) => {
    const startMs = Math.round(r.start_time * 1000) - s.paddedMs;
    return resultWords(r, startMs, Math.max(1, Math.round(s.samples / 16) - startMs), capitals).filter((w) => w.start_ms > s.settledFrom);
  };

  /** Close the segment: what follows is a new utterance. */
  const reset = (s: Session) => {
    s.recognizer.native.reset(s.stream);
    s.lastText = '';
    s.settledFrom = -1;
  };

  /** Sessions whose audio waits for the next batch, with the answers of their calls. */
  let waiting: { s: Session; answer(reply: OnlineReply): void; fail(err: unknown): void }[] = [];

  /** Decode every waiting session's ready audio, a batch per recognizer, and answer each with its results. */
  const decodeWaiting = (): void => {
    const batch = waiting;
    waiting = [];
    try {
      for (const r of new Set(batch.map((w) => w.s.recognizer))) {
        const streams = batch.filter((w) => w.s.recognizer === r).map((w) => w.s.stream);
        const ready = () => streams.filter((x) => r.native.isReady(x));
        for (let now = ready(); now.length > 0; now = ready()) {
          if (batches && now.length > 1) r.native.decodeStreams(now);
          else for (const x of now) r.native.decode(x);
        }
      }
    } catch (err) {
      for (const w of batch) w.fail(err);
      return;
    }
    for (const w of batch) {
      try {
        const events: OnlineEvent[] = [];
        results(w.s, events);
        w.answer({ events });
      } catch (err) {
        w.fail(err);
      }
    }
  };

  /** The partial result if it changed, and the final one at an endpoint (the stream decoded as far as it can be). */
  const results = (s: Session, events: OnlineEvent[]): void => {
    const rec = s.recognizer.native;
    const r = rec.getResult(s.stream);
    // The session's own pause rule, from the trailing blanks after words; the recognizer's rules only cap the length.
    const paused = s.modelPauses && s.endpointMs > 0 && r.text.trim() !== '' && r.num_trailing_blanks * FRAME_MS >= s.endpointMs;
    if (paused || rec.isEndpoint(s.stream)) {
      // Without words too: the utterance's audio is over (a second pass drops it).
      events.push({ type: 'final', tokens: r.text.trim() ? words(s, r) : [], endpoint: paused });
      reset(s);
    } else {
      const open = words(s, r);
      const settled = s.settleMs > 0 ? settledCount(open, Math.round(s.samples / 16) - s.settleMs) : 0;
      if (settled > 0) {
        events.push({ type: 'final', tokens: open.slice(0, settled), endpoint: false });
        s.settledFrom = open[settled - 1]!.start_ms;
        s.lastText = '';
      }
      if (r.text !== s.lastText) {
        s.lastText = r.text;
        if (open.length > settled) events.push({ type: 'partial', tokens: open.slice(settled) });
      }
    }
  };

  /** Close the open utterance now: its words, final (none when it has none). */
  const close = (s: Session, end: boolean, endpoint = false): OnlineEvent[] => {
    const r = flush(s, end);
    const events: OnlineEvent[] = r.text.trim() ? [{ type: 'final', tokens: words(s, r), endpoint }] : [];
    reset(s);
    // Later words come after the silence that pushed these out.
    s.paddedMs += FLUSH_MS;
    return events;
  };

  return (req) => {
    switch (req.op) {
      case 'load':
        config = req.config;
        batches = req.batches ?? false;
        capitals = tokenCase(config.modelConfig.tokens!) === 'upper';
        recognizers.set('', { native: build(config, ''), hotwords: '', sessions: 0 });
        return { ok: true };
      case 'open': {
        if (!config) throw new Error('recognizer not loaded');
        sessions.set(req.session, newSession(recognizerFor(req.hotwords ?? ''), req.endpointMs, req.settleMs ?? 0));
        return { ok: true };
      }
      case 'audio': {
        const s = session(req.session);
        s.stream.acceptWaveform({ samples: pcmToFloat32(req.samples), sampleRate: 16_000 });
        s.samples += req.samples.length;
        s.modelPauses = req.modelPauses ?? true;
        return new Promise<OnlineReply>((answer, fail) => {
          if (waiting.length === 0) setImmediate(decodeWaiting);
          waiting.push({ s, answer, fail });
        });
      }
      case 'finalize': {
        const s = session(req.session);
        const events = close(s, req.end, req.endpoint);
        if (req.end) drop(req.session);
        return { events };
      }
      case 'settle': {
        // Every word of the open utterance but the last (which may still be growing: "THE" of "THERE") is final now;
        // the decoder goes on undisturbed, where a cut would cost the words around it.
        const s = session(req.session);
        const open = words(s, s.recognizer.native.getResult(s.stream));
        if (open.length < 2) return { events: [] };
        s.settledFrom = open.at(-2)!.start_ms;
        s.lastText = ''; // the rest shows again as partial on the next audio
        return { events: [{ type: 'final', tokens: open.slice(0, -1), endpoint: false }] };
      }
      case 'close':
        drop(req.session);
        return { ok: true };
      case 'decode': {
        // A whole segment of a file, as fast as the CPU allows: a stream of its own, ended like a session's.
        if (!config) throw new Error('recognizer not loaded');
        const recognizer = recognizerFor(req.hotwords ?? '');
        try {
          const s = newSession(recognizer, 0, 0);
          s.stream.acceptWaveform({ samples: pcmToFloat32(req.samples), sampleRate: 16_000 });
          s.samples = req.samples.length;
          const r = flush(s, true);
          return { result: { text: r.text, tokens: r.tokens, timestamps: r.timestamps, ys_probs: r.ys_probs } };
        } finally {
          recognizer.sessions--;
        }
      }
    }
  };
}

/**
 * Decode everything the stream holds and start a new segment: silence after the last words lets the model name them
 * (a transducer emits a word once it has heard past it), and at the end of the stream sherpa-onnx also decodes the
 * last partial chunk once told no more audio comes. The segment's result (its times in stream time).
 */
function flush(s: Session, end: boolean): sherpaTypes.OnlineRecognizerResult {
  const rec = s.recognizer.native;
  s.stream.acceptWaveform({ samples: FLUSH, sampleRate: 16_000 });
  if (end) s.stream.inputFinished();
  while (rec.isReady(s.stream)) rec.decode(s.stream);
  return rec.getResult(s.stream);
}

function newSession(recognizer: Recognizer, endpointMs: number, settleMs: number): Session {
  return {
    recognizer,
    stream: recognizer.native.createStream(),
    samples: 0,
    paddedMs: 0,
    lastText: '',
    settledFrom: -1,
    endpointMs,
    modelPauses: true,
    settleMs,
  };
}

/** A recognizer of the model; with hotwords, one that favours them (written to the file sherpa-onnx reads them from). */
function build(config: OnlineRecognizerConfig, hotwords: string): sherpaTypes.OnlineRecognizer {
  if (!hotwords) return new (sherpa().OnlineRecognizer)(config);
  const dir = mkdtempSync(path.join(tmpdir(), 'parlance-hotwords-'));
  try {
    const file = path.join(dir, 'hotwords.txt');
    writeFileSync(file, `${hotwords.split('/').join('\n')}\n`);
    return new (sherpa().OnlineRecognizer)({ ...config, hotwordsFile: file, hotwordsScore: HOTWORDS_SCORE });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
