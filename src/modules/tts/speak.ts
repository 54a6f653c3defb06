// One synthesis, whichever surface asked for it (POST /tts, /v1/audio/speech, /tts-websocket, Wyoming): the
// concurrency slot, the pipeline (synthesis.ts, with the audio cap), a temporary key's session deadline, and the
// usage metered once. The surface resolves its request, hands over a sink for the audio and its client's signal,
// and renders what speak() throws in its own shape: before `sink.start` nothing was sent (a refusal), after it the
// audio is cut.
import type { Logger } from 'pino';
import { abortable } from '../../lib/abortable.js';
import { ApiError } from '../../wire/api-error.js';
import type { TtsTimestamps, TtsWordTimestamp } from '../../wire/tts-frames.js';
import { type Caller, sessionDeadline } from '../auth/service.js';
import type { Admission } from '../limits/admission.js';
import type { UsageMeter } from '../usage/service.js';
import type { TtsConfig } from './request-config.js';
import type { SpeechText } from './speech-text.js';
import { synthesize, type TtsOutput, type TtsOutputChunk } from './synthesis.js';

/** Who a synthesis is for and metered to: an authenticated key, or Wyoming's configured project (no key). */
export type SpeechCaller = Caller;

export interface SpeechRequest {
  cfg: TtsConfig;
  text: SpeechText;
  /** The request id of its usage record. */
  requestId: string;
  /** When the request arrived: its usage record's start, and the start of a temporary key's session. */
  startedAt: Date;
  /** Usage that could not be recorded once the answer was over is logged here, as `<label> usage not recorded`. */
  log: Pick<Logger, 'error'>;
  label: string;
  /** Word times with the audio (TtsOutputChunk.words, SpeechResult.words). */
  words?: boolean;
}

export interface SpeechResult {
  /** Characters metered. */
  characters: number;
  /** Seconds of audio generated. */
  seconds: number;
  /** The audio cap cut the audio: the rest of the text was not spoken. */
  truncated: boolean;
  /** Character timings not attached to a chunk yet. */
  timestamps?: TtsTimestamps;
  /** Word times not attached to a chunk yet (when asked for). */
  words?: TtsWordTimestamp[];
}

/** Where the audio goes. Each call is awaited (backpressure); what one throws fails the synthesis. */
export interface SpeechSink {
  /** The first audio is ready, or the synthesis ended without any. Failures before this are refusals. */
  start(): void | Promise<void>;
  audio(chunk: TtsOutputChunk): void | Promise<void>;
  /** The audio is complete, and metered. */
  end(result: SpeechResult): void | Promise<void>;
}

/** The usage of a complete synthesis could not be recorded: the surface fails it rather than hand over unbilled work. */
export class UsageNotRecorded extends Error {
  constructor(cause: unknown) {
    super('usage not recorded', { cause });
  }
}

export interface SpeakDeps {
  admission: Pick<Admission, 'acquire'>;
  meter?: UsageMeter;
  maxAudioSeconds: number;
}

export async function speak(deps: SpeakDeps, req: SpeechRequest, caller: SpeechCaller, sink: SpeechSink, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  const release = await deps.admission.acquire(caller);
  // Stopped by the client or by the temporary key's session deadline: either ends the synthesis at once.
  const stop = new AbortController();
  const onAbort = () => stop.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const deadline = sessionDeadline(caller, req.startedAt);
  const timer = deadline
    ? setTimeout(
        () => stop.abort(new ApiError('temp_api_key_session_expired', `Session exceeded the temporary API key's max_session_duration_seconds.`)),
        Math.max(0, deadline.getTime() - Date.now()),
      )
    : undefined;
  let out: TtsOutput | undefined;
  let metered: Promise<void> | undefined;
  const meter = (o: TtsOutput) => (metered ??= meterSpeech(deps.meter, req, caller, o));
  let failedBeforeAudio = false;
  try {
    // The client may have gone while the slot was being taken.
    signal?.throwIfAborted();
    const o = (out = synthesize(req.cfg, req.text.source, deps.maxAudioSeconds, stop.signal, { words: req.words }));
    const next = () => abortable(o.chunks.next(), stop.signal);
    let chunk: IteratorResult<TtsOutputChunk>;
    try {
      chunk = await next();
    } catch (err) {
      failedBeforeAudio = !stop.signal.aborted;
      throw err;
    }
    await abortable(Promise.resolve(sink.start()), stop.signal);
    for (; !chunk.done; chunk = await next()) await abortable(Promise.resolve(sink.audio(chunk.value)), stop.signal);
    clearTimeout(timer);
    // Metered before the end: work that cannot be billed ends in a failure, not in a complete answer.
    await meter(o).catch((err: unknown) => {
      throw new UsageNotRecorded(err);
    });
    stop.signal.throwIfAborted();
    const words = o.takeWords();
    await sink.end({
      characters: req.text.characters(),
      seconds: o.seconds(),
      truncated: o.truncated(),
      timestamps: o.takeTimestamps(),
      ...(words ? { words } : {}),
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    stop.abort();
    // Ends the pipeline (and its encoder) once a chunk left pending by a stop settles.
    void out?.chunks.return(undefined).catch(() => undefined);
    release();
    // A stopped or failed synthesis is metered for the text received and the audio made so far; one that failed on
    // this side before any audio is not.
    if (out && !metered && !failedBeforeAudio) void meter(out).catch((err: unknown) => req.log.error({ err }, `${req.label} usage not recorded`));
  }
}

async function meterSpeech(meter: UsageMeter | undefined, req: SpeechRequest, caller: SpeechCaller, out: TtsOutput): Promise<void> {
  const characters = req.text.characters();
  const seconds = out.seconds();
  if (!meter || (characters <= 0 && seconds <= 0)) return;
  await meter.meter({
    kind: 'tts',
    actor: caller,
    requestId: req.requestId,
    clientReferenceId: req.cfg.clientReferenceId ?? caller.temporary?.clientReferenceId ?? null,
    model: req.cfg.model.id,
    startTime: req.startedAt,
    inputCharacters: characters,
    outputAudioMs: seconds * 1000,
  });
}
