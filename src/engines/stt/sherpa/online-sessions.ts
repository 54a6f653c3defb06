// One streaming recognizer (sherpa-onnx OnlineRecognizer, synchronous only) and the live sessions it serves, as a
// request handler run on a worker thread (online-worker.ts), or inline when there is no compiled worker. Each session
// is a stream of the recognizer, decoded chunk by chunk as its audio arrives; the words of the open utterance come
// back as partial results, and an endpoint (the model's pause rules), finalize or the end of the stream makes them
// final. Times are ms from the session's first sample.
import type sherpaTypes from 'sherpa-onnx-node';
import { pcmToFloat32, sherpa } from './load-sherpa.js';
import type { OnlineEvent, OnlineReply, OnlineRequest } from './online-worker-messages.js';
import { resultWords } from './words.js';

interface Session {
  stream: sherpaTypes.OnlineStream;
  /** Where the current stream starts in the session's audio (a finalize starts a new stream), ms. */
  offsetMs: number;
  /** Samples received. */
  samples: number;
  lastText: string;
  /** Trailing silence after words that ends an utterance, ms (0: only the longest-utterance rule). */
  endpointMs: number;
}

/** Encoder frame of sherpa's streaming transducers (its trailing-blank count is in these), ms. */
const FRAME_MS = 40;
/** Silence fed after the audio at a finalize (as sherpa-onnx's own examples do at the end of a file). */
const TAIL_PADDING = new Float32Array(16_000 * 0.4);

export type OnlineCall = OnlineRequest extends infer R ? (R extends OnlineRequest ? Omit<R, 'id'> : never) : never;

export function onlineHandler(): (req: OnlineCall) => OnlineReply {
  let recognizer: sherpaTypes.OnlineRecognizer | undefined;
  const sessions = new Map<number, Session>();

  const session = (id: number): Session => {
    const s = sessions.get(id);
    if (!s) throw new Error(`no session ${id}`);
    return s;
  };

  const words = (s: Session, r: sherpaTypes.OnlineRecognizerResult) => {
    const startMs = s.offsetMs + Math.round(r.start_time * 1000);
    return resultWords(r, startMs, Math.max(1, Math.round(s.samples / 16) - startMs));
  };

  /** Decode what is ready; the partial result if it changed, and the final one at an endpoint. */
  const decode = (s: Session, events: OnlineEvent[]): void => {
    const rec = recognizer!;
    while (rec.isReady(s.stream)) rec.decode(s.stream);
    const r = rec.getResult(s.stream);
    // The session's own pause rule, from the trailing blanks after words; the recognizer's rules only cap the length.
    const paused = s.endpointMs > 0 && r.text.trim() !== '' && r.num_trailing_blanks * FRAME_MS >= s.endpointMs;
    if (paused || rec.isEndpoint(s.stream)) {
      // Without words too: the utterance's audio is over (a second pass drops it).
      events.push({ type: 'final', tokens: r.text.trim() ? words(s, r) : [], endpoint: paused });
      rec.reset(s.stream);
      s.lastText = '';
    } else if (r.text !== s.lastText) {
      s.lastText = r.text;
      const tokens = words(s, r);
      if (tokens.length) events.push({ type: 'partial', tokens });
    }
  };

  return (req) => {
    switch (req.op) {
      case 'load':
        recognizer = new (sherpa().OnlineRecognizer)(req.config);
        return { ok: true };
      case 'open':
        if (!recognizer) throw new Error('recognizer not loaded');
        sessions.set(req.session, { stream: recognizer.createStream(), offsetMs: 0, samples: 0, lastText: '', endpointMs: req.endpointMs });
        return { ok: true };
      case 'audio': {
        const s = session(req.session);
        s.stream.acceptWaveform({ samples: pcmToFloat32(req.samples), sampleRate: 16_000 });
        s.samples += req.samples.length;
        const events: OnlineEvent[] = [];
        decode(s, events);
        return { events };
      }
      case 'finalize': {
        const s = session(req.session);
        // Silence after the last words lets the model close them (a transducer names a word once it has heard its end),
        // and the last partial chunk is decoded only once the stream is told no more audio comes. The padding is not
        // session audio: times stay on the session's clock.
        s.stream.acceptWaveform({ samples: TAIL_PADDING, sampleRate: 16_000 });
        s.stream.inputFinished();
        const events: OnlineEvent[] = [];
        decode(s, events);
        const r = recognizer!.getResult(s.stream);
        if (r.text.trim()) events.push({ type: 'final', tokens: words(s, r), endpoint: false });
        if (req.end) sessions.delete(req.session);
        // Later audio goes into a new stream of this session.
        else Object.assign(s, { stream: recognizer!.createStream(), offsetMs: Math.round(s.samples / 16), lastText: '' });
        return { events };
      }
      case 'close':
        sessions.delete(req.session);
        return { ok: true };
    }
  };
}
