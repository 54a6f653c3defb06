// /tts-websocket sessions, free of WebSocket types: one connection multiplexes streams keyed by stream_id
// (docs/wire-compat.md, "TTS WebSocket"). The transport hands over every client message (`text`, `binary`) and the
// socket's close (`gone`); the session answers through `TtsSocketIO.send` (JSON frames, audio in base64) and
// `TtsSocketIO.close` (close 1000). Per-stream errors keep the connection open and are followed by `terminated`;
// connection-level errors close it.
//
// A stream: starting ──(admission, config)──▶ active ──text_end──▶ finishing ──audio_end──▶ ended
//           any state ──cancel──▶ cancelled;  any error ──▶ failed (error frame, then terminated)
// An active stream is one TtsService.speak (slot, synthesis, caps, metering) whose sink sends the audio frames.
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import { newRequestId } from '../../lib/ids.js';
import { LiveSet, type LiveSurface } from '../../lib/live-set.js';
import { ApiError, asApiError, shuttingDownError } from '../../wire/api-error.js';
import type { CompatProfile } from '../../wire/compat.js';
import { parseTtsClientMessage, ttsErrorFrame, type TtsAudioEndFrame, type TtsAudioFrame, type TtsServerFrame } from '../../wire/tts-frames.js';
import { parseTtsStart } from './request-config.js';
import type { TtsService } from './service.js';
import { type SpeechSink, UsageNotRecorded } from './speak.js';
import type { LiveText } from './speech-text.js';

export interface TtsSocketIO {
  send(frame: TtsServerFrame): void;
  /** Close the connection normally (1000) after the frames sent so far. */
  close(): void;
}

/** The socket's settings, resolved once. */
export interface TtsSocketOptions {
  /** A stream with no text this long (and no text_end) fails with request_timeout. */
  requestTimeoutMs: number;
  /** Live streams per connection. */
  maxStreams: number;
  profile: CompatProfile;
}

export function ttsSocketOptions(settings: Pick<Settings, 'ttsWsRequestTimeoutSeconds' | 'ttsWsMaxStreams' | 'compat'>): TtsSocketOptions {
  return {
    requestTimeoutMs: settings.ttsWsRequestTimeoutSeconds * 1000,
    maxStreams: settings.ttsWsMaxStreams,
    profile: settings.compat,
  };
}

export interface TtsSocketDeps {
  tts: TtsService;
  log: Logger;
  errorReferenceUrl(): string;
}

type StreamStatus = 'starting' | 'active' | 'finishing' | 'ended' | 'cancelled' | 'failed';

interface Stream {
  id: string;
  status: StreamStatus;
  requestId: string;
  /** The client's text, capped (characters per request) as it arrives. */
  text: LiveText;
  /** Stops the stream's synthesis (and frees its slot). */
  ac: AbortController;
  timer?: NodeJS.Timeout;
}

/** Status read through a call: it changes while start() awaits. */
const over = (s: Stream): boolean => s.status === 'cancelled' || s.status === 'failed';

const LIVE: readonly StreamStatus[] = ['starting', 'active', 'finishing'];
/** Finished streams remembered per connection (for invalid_stream_state on late messages). */
const REMEMBERED = 1000;

/** The open /tts-websocket connections of this node, for a graceful shutdown. */
export class TtsSockets implements LiveSurface {
  private readonly live = new LiveSet<TtsSession>();
  private draining = false;

  constructor(
    readonly deps: TtsSocketDeps,
    readonly opts: TtsSocketOptions,
  ) {}

  /** A new connection; `handshakeKey` is the key offered at the handshake (a start's own api_key wins). */
  open(io: TtsSocketIO, handshakeKey: string | undefined): TtsSession {
    const session = new TtsSession(this, io, handshakeKey);
    this.live.add(session);
    if (this.draining) session.drain();
    return session;
  }

  drain(): Promise<void> {
    this.draining = true;
    for (const s of this.live) s.drain();
    return this.live.empty();
  }

  abortAll(): void {
    for (const s of this.live) s.abortAll();
  }

  /** @internal */
  forget(s: TtsSession): void {
    this.live.delete(s);
  }
}

export class TtsSession {
  private readonly streams = new Map<string, Stream>();
  private closed = false;
  /** The server is stopping: no new streams; the connection closes once its live streams ended. */
  private draining = false;

  constructor(
    private readonly sockets: TtsSockets,
    private readonly io: TtsSocketIO,
    private readonly handshakeKey: string | undefined,
  ) {}

  private get deps(): TtsSocketDeps {
    return this.sockets.deps;
  }

  private get opts(): TtsSocketOptions {
    return this.sockets.opts;
  }

  /** A text message from the client. */
  text(data: string): void {
    if (this.closed) return;
    const parsed = parseTtsClientMessage(data, this.handshakeKey !== undefined);
    if (!parsed.ok) return this.fail(parsed.error);
    const m = parsed.message;
    if (m.type === 'keep_alive') return; // accepted silently; does not extend any request_timeout window
    if (m.type === 'start') return void this.start(m.stream_id, m.api_key, m.body);
    if (m.type === 'cancel') return this.cancel(m.stream_id);
    return this.onText(m.stream_id, 'error' in m ? m.error : m);
  }

  /** A binary message from the client. */
  binary(): void {
    if (this.closed) return;
    this.fail(new ApiError('invalid_request', 'Binary frames are not accepted: send JSON text messages.'));
  }

  /** The socket closed. */
  gone(): void {
    this.closed = true;
    for (const s of this.streams.values()) this.stop(s);
    this.sockets.forget(this);
  }

  /** Connection-level error: one frame (stream_id "" in the spec profile, omitted in soniox-sdk), then close. */
  fail(err: ApiError): void {
    this.send(ttsErrorFrame(err, null, newRequestId(), this.deps.errorReferenceUrl(), this.opts.profile));
    this.closeNow();
  }

  /** Graceful shutdown: streams already started run to their end (the client may still send text); then close. */
  drain(): void {
    this.draining = true;
    this.closeIfDrained();
  }

  /** The drain time ran out: every live stream gets the error frame and `terminated`, then the connection closes. */
  abortAll(): void {
    for (const s of this.streams.values()) {
      if (!LIVE.includes(s.status)) continue;
      this.failStream(s, shuttingDownError(`stream ${s.id} could not be finished in time`));
    }
    this.closeIfDrained();
  }

  private closeNow(): void {
    this.closed = true;
    for (const s of this.streams.values()) this.stop(s);
    this.io.close();
  }

  private closeIfDrained(): void {
    if (!this.draining || this.closed || this.live() > 0) return;
    this.closed = true;
    this.io.close();
  }

  private send(frame: TtsServerFrame): void {
    if (!this.closed) this.io.send(frame);
  }

  private live(): number {
    let n = 0;
    for (const s of this.streams.values()) if (LIVE.includes(s.status)) n++;
    return n;
  }

  private stop(s: Stream): void {
    clearTimeout(s.timer);
    s.ac.abort();
    s.text.end();
    this.endedOne();
  }

  /** A stream ended: once its last frames went out, a draining connection may close. */
  private endedOne(): void {
    queueMicrotask(() => this.closeIfDrained());
  }

  /** Per-stream error frame; `terminate` also sends `terminated`. */
  private streamError(id: string, err: unknown, requestId: string, terminate: boolean): void {
    const apiErr = asApiError(err);
    if (apiErr.status >= 500) this.deps.log.error({ err, stream_id: id }, 'tts stream failed');
    this.send(ttsErrorFrame(apiErr, id, requestId, this.deps.errorReferenceUrl(), this.opts.profile));
    if (terminate) this.send({ stream_id: id, terminated: true });
  }

  /** The stream fails: stopped, then its error frame and `terminated`. */
  private failStream(s: Stream, err: unknown): void {
    s.status = 'failed';
    this.stop(s);
    this.streamError(s.id, err, s.requestId, true);
  }

  private remember(s: Stream): void {
    this.streams.delete(s.id);
    this.streams.set(s.id, s);
    if (this.streams.size > REMEMBERED) {
      for (const [id, old] of this.streams) {
        if (this.streams.size <= REMEMBERED) break;
        if (!LIVE.includes(old.status)) this.streams.delete(id);
      }
    }
  }

  private armTimeout(s: Stream): void {
    clearTimeout(s.timer);
    const ms = this.opts.requestTimeoutMs;
    s.timer = setTimeout(() => {
      if (s.status !== 'starting' && s.status !== 'active') return;
      this.failStream(s, new ApiError('request_timeout', `No text for ${ms / 1000} s on stream ${s.id}: send text or text_end.`));
    }, ms);
  }

  private async start(id: string, apiKey: unknown, body: Record<string, unknown>): Promise<void> {
    const requestId = newRequestId();
    const existing = this.streams.get(id);
    if (existing && LIVE.includes(existing.status))
      return this.streamError(id, new ApiError('invalid_stream_state', `Stream ${id} is already active.`), requestId, false);
    if (this.draining) return this.streamError(id, shuttingDownError('no new streams are accepted'), requestId, true);
    if (this.live() >= this.opts.maxStreams)
      return this.streamError(
        id,
        new ApiError('max_concurrent_streams_reached', `At most ${this.opts.maxStreams} simultaneous streams per connection.`),
        requestId,
        true,
      );
    const tts = this.deps.tts;
    // An SSML stream's text is capped with its markup (checked as a field once the start is parsed).
    const s: Stream = { id, status: 'starting', requestId, text: tts.liveText(body.text_format === 'ssml' ? 'ssml' : 'text'), ac: new AbortController() };
    this.remember(s);
    this.armTimeout(s);
    const startedAt = new Date();
    try {
      const auth = await tts.admission.authorize(apiKey ?? this.handshakeKey);
      const fields = parseTtsStart(body);
      const cfg = await tts.resolveConfigFor(auth, fields);
      if (over(s) || this.closed) return; // cancelled, timed out or closed meanwhile
      if (s.status === 'starting') s.status = 'active';
      const log = this.deps.log.child({ stream_id: id });
      const text = tts.streamText(s.text, cfg, fields.text_format);
      const words = fields.word_timestamps === true;
      await tts.speak({ cfg, text, requestId, startedAt, log, label: 'tts', words }, auth, this.sink(s, fields.return_timestamps === true), s.ac.signal);
    } catch (err) {
      if (over(s) || this.closed) return;
      // Work that cannot be billed ends in an error, not in audio_end.
      const failure =
        err instanceof UsageNotRecorded
          ? new ApiError('internal_error', `The usage of stream ${id} could not be recorded, so the stream failed; try again later.`, { cause: err.cause })
          : err;
      this.failStream(s, failure);
      // The temporary key's session cap: reported on this stream, then the connection is dropped.
      if (err instanceof ApiError && err.type === 'temp_api_key_session_expired') this.closeNow();
    } finally {
      clearTimeout(s.timer);
      this.endedOne();
    }
  }

  /** Where a stream's audio goes: audio frames, then audio_end and terminated once it is complete and metered. */
  private sink(s: Stream, returnTimestamps: boolean): SpeechSink {
    return {
      start: () => undefined,
      audio: (chunk) => {
        // Word times go out just before the audio they describe.
        if (chunk.words) this.send({ stream_id: s.id, word_timestamps: chunk.words });
        const frame: TtsAudioFrame = { stream_id: s.id, audio: chunk.audio.toString('base64') };
        if (returnTimestamps && chunk.timestamps) frame.timestamps = chunk.timestamps;
        this.send(frame);
      },
      end: (result) => {
        if (result.words) this.send({ stream_id: s.id, word_timestamps: result.words });
        // Generation stopped at the cap: the last chunk went out without audio_end; error, then terminated.
        if (result.truncated)
          throw new ApiError('max_audio_duration_reached', 'Generated audio reached the 2-minute limit; the rest of the text was not spoken.');
        const final: TtsAudioEndFrame = { stream_id: s.id, audio_end: true };
        if (returnTimestamps && result.timestamps) final.timestamps = result.timestamps;
        this.send(final);
        s.status = 'ended';
        this.send({ stream_id: s.id, terminated: true });
      },
    };
  }

  private cancel(id: string): void {
    const s = this.streams.get(id);
    const requestId = s?.requestId ?? newRequestId();
    if (!s) return this.streamError(id, new ApiError('invalid_stream_state', `cancel for unknown stream ${id}.`), requestId, false);
    if (s.status === 'cancelled') return this.streamError(id, new ApiError('invalid_stream_state', `Stream ${id} was already cancelled.`), requestId, false);
    if (!LIVE.includes(s.status)) return; // already over: nothing left to stop
    s.status = 'cancelled';
    this.stop(s);
    this.send({ stream_id: id, terminated: true });
  }

  /** Text for a stream, or the error of a text message whose fields have the wrong type. */
  private onText(id: string, m: { text: string; text_end: boolean } | ApiError): void {
    const s = this.streams.get(id);
    const requestId = s?.requestId ?? newRequestId();
    if (!s) return this.streamError(id, new ApiError('invalid_stream_state', `text for unknown stream ${id}.`), requestId, false);
    if (s.status === 'finishing' || s.status === 'ended')
      return this.streamError(id, new ApiError('invalid_stream_state', `text after text_end on stream ${id}.`), requestId, false);
    if (s.status === 'cancelled' || s.status === 'failed') return; // the stream is over; late text is dropped
    if (m instanceof ApiError) return this.failStream(s, m);
    try {
      s.text.push(m.text);
    } catch (err) {
      return this.failStream(s, err);
    }
    if (m.text_end) {
      clearTimeout(s.timer);
      s.status = 'finishing';
      s.text.end();
    } else this.armTimeout(s);
  }
}
