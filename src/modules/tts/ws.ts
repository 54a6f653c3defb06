// /tts-websocket: one connection multiplexes streams keyed by stream_id (sdk-wire-notes §5). Messages are
// classified by their keys (D10): api_key → start, cancel → cancel, keep_alive → keepalive (no stream_id,
// never answered), text / text_end → text. Audio goes out as base64 in JSON text frames (D11). Per-stream
// errors keep the connection open and are followed by `terminated`; connection-level errors close it.
import type { WebSocket } from 'ws';
import type { AppContext } from '../../http/context.js';
import { handshakeApiKey, type WsHandler } from '../../http/websocket.js';
import { toApiError } from '../../http/error-mapping.js';
import { newRequestId } from '../../lib/ids.js';
import { LiveSet, type LiveSurface } from '../../lib/live-set.js';
import { ApiError, shuttingDownError } from '../../wire/api-error.js';
import type { CompatProfile } from '../../wire/compat.js';
import { ttsErrorFrame } from '../../wire/tts-frames.js';
import { sessionDeadline } from '../auth/service.js';
import type { TtsService } from './service.js';

type StreamStatus = 'starting' | 'active' | 'finishing' | 'ended' | 'cancelled' | 'failed';

/** Text chunks from the client, pulled by the engine as it synthesizes. */
class TextQueue implements AsyncIterable<string> {
  private items: string[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  push(text: string): void {
    if (text) this.items.push(text);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

interface Stream {
  id: string;
  status: StreamStatus;
  requestId: string;
  text: TextQueue;
  textChars: number;
  ac: AbortController;
  /** Frees the stream's concurrency slot (idempotent). */
  release?: () => void;
  timer?: NodeJS.Timeout;
  capTimer?: NodeJS.Timeout;
}

/** Status read through a call: it changes while start() awaits. */
const over = (s: Stream): boolean => s.status === 'cancelled' || s.status === 'failed';

const LIVE: readonly StreamStatus[] = ['starting', 'active', 'finishing'];
/** Finished streams remembered per connection (for invalid_stream_state on late messages). */
const REMEMBERED = 1000;

/** The TTS WebSocket surface: its handler, and its open connections for a graceful shutdown. */
export interface TtsWebSocketSurface extends LiveSurface {
  handler: WsHandler;
}

export function ttsWebSocketSurface(ctx: AppContext): TtsWebSocketSurface {
  const connections = new LiveSet<TtsConnection>();
  let draining = false;
  return {
    handler(socket, request) {
      const connection = new TtsConnection(ctx, socket, handshakeApiKey(request), () => connections.delete(connection));
      connections.add(connection);
      connection.listen();
      if (draining) connection.drain();
      return {
        oversized: (limit) => connection.connectionError(`Message larger than ${limit} bytes.`),
        firstMessageTimeout: (ms) => connection.connectionError(`Request timeout: no message within ${ms / 1000} s of connecting.`, 'request_timeout'),
      };
    },
    drain() {
      draining = true;
      for (const c of connections) c.drain();
      return connections.empty();
    },
    abortAll() {
      for (const c of connections) c.abortAll();
    },
  };
}

class TtsConnection {
  private readonly streams = new Map<string, Stream>();
  private readonly tts: TtsService;
  private readonly profile: CompatProfile;
  private closed = false;
  /** The server is stopping: no new streams; the connection closes once its live streams ended. */
  private draining = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly socket: WebSocket,
    /** Key offered at the handshake; a start message's own api_key takes precedence. */
    private readonly handshakeKey: string | undefined,
    private readonly onClosed: () => void,
  ) {
    this.tts = ctx.tts;
    this.profile = ctx.settings.compat as CompatProfile;
  }

  listen(): void {
    this.socket.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    this.socket.on('close', () => {
      this.closed = true;
      for (const s of this.streams.values()) this.stop(s);
      this.onClosed();
    });
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
      s.status = 'failed';
      this.stop(s);
      this.streamError(s.id, shuttingDownError(`stream ${s.id} could not be finished in time`), s.requestId, true);
    }
    this.closeIfDrained();
  }

  private closeIfDrained(): void {
    if (!this.draining || this.closed || this.live() > 0) return;
    this.closed = true;
    this.socket.close(1000);
  }

  private send(frame: Record<string, unknown>): void {
    if (!this.closed && this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(frame));
  }

  private live(): number {
    let n = 0;
    for (const s of this.streams.values()) if (LIVE.includes(s.status)) n++;
    return n;
  }

  private stop(s: Stream): void {
    clearTimeout(s.timer);
    clearTimeout(s.capTimer);
    s.ac.abort();
    s.text.end();
    s.release?.();
    this.endedOne();
  }

  /** A stream ended: once its last frames went out, a draining connection may close. */
  private endedOne(): void {
    queueMicrotask(() => this.closeIfDrained());
  }

  /** Connection-level error: one frame (stream_id "" in the spec profile, omitted in soniox-sdk), then close. */
  connectionError(message: string, type: 'invalid_request' | 'request_timeout' = 'invalid_request'): void {
    const err = new ApiError(type, message);
    this.send(ttsErrorFrame(err, null, newRequestId(), this.ctx.errorReferenceUrl(), this.profile));
    this.closed = true;
    for (const s of this.streams.values()) this.stop(s);
    this.socket.close(1000);
  }

  /** Per-stream error frame; `terminate` also ends the stream and sends `terminated`. */
  private streamError(id: string, err: unknown, requestId: string, terminate: boolean): void {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) this.ctx.log.error({ err, stream_id: id }, 'tts stream failed');
    this.send(ttsErrorFrame(apiErr, id, requestId, this.ctx.errorReferenceUrl(), this.profile));
    if (terminate) this.send({ stream_id: id, terminated: true });
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

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.closed) return;
    if (isBinary) return this.connectionError('Binary frames are not accepted: send JSON text messages.');
    let msg: unknown;
    try {
      msg = JSON.parse(data.toString('utf8'));
    } catch {
      return this.connectionError('Malformed JSON message.');
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return this.connectionError('Each message must be a JSON object.');
    const m = msg as Record<string, unknown>;
    let kind: 'start' | 'cancel' | 'keepalive' | 'text';
    // A start carries api_key, or (key given at the handshake) at least its model or voice.
    if ('api_key' in m || (this.handshakeKey !== undefined && ('model' in m || 'voice' in m) && !('text' in m))) kind = 'start';
    else if ('cancel' in m) kind = 'cancel';
    else if ('keep_alive' in m) kind = 'keepalive';
    else if ('text' in m || 'text_end' in m) kind = 'text';
    else return this.connectionError('Unrecognized message: expected a stream start (api_key), text, text_end, cancel or keep_alive.');
    if (kind === 'keepalive') return; // accepted silently; does not extend any request_timeout window
    const id = m.stream_id;
    if (typeof id !== 'string' || id.length === 0) return this.connectionError(`${kind === 'start' ? 'Stream start' : kind === 'cancel' ? 'cancel' : 'text'} message needs a non-empty string stream_id.`);
    if (id.length > 256) return this.connectionError('stream_id is longer than 256 characters.');
    if (kind === 'start') return void this.start(id, m);
    if (kind === 'cancel') return this.cancel(id);
    return this.text(id, m);
  }

  private armTimeout(s: Stream): void {
    clearTimeout(s.timer);
    const ms = this.ctx.settings.ttsWsRequestTimeoutSeconds * 1000;
    s.timer = setTimeout(() => {
      if (s.status !== 'starting' && s.status !== 'active') return;
      s.status = 'failed';
      this.stop(s);
      this.streamError(s.id, new ApiError('request_timeout', `No text for ${ms / 1000} s on stream ${s.id}: send text or text_end.`), s.requestId, true);
    }, ms);
  }

  private async start(id: string, m: Record<string, unknown>): Promise<void> {
    const requestId = newRequestId();
    const existing = this.streams.get(id);
    if (existing && LIVE.includes(existing.status))
      return this.streamError(id, new ApiError('invalid_stream_state', `Stream ${id} is already active.`), requestId, false);
    if (this.draining) return this.streamError(id, shuttingDownError('no new streams are accepted'), requestId, true);
    if (this.live() >= this.ctx.settings.ttsWsMaxStreams)
      return this.streamError(
        id,
        new ApiError('max_concurrent_streams_reached', `At most ${this.ctx.settings.ttsWsMaxStreams} simultaneous streams per connection.`),
        requestId,
        true,
      );
    const s: Stream = { id, status: 'starting', requestId, text: new TextQueue(), textChars: 0, ac: new AbortController() };
    this.remember(s);
    this.armTimeout(s);
    const startedAt = new Date();
    let out;
    let auth;
    let cfg;
    let returnTimestamps = false;
    try {
      auth = await this.tts.authorizeStart(m.api_key ?? this.handshakeKey);
      cfg = await this.tts.resolveConfigFor(auth, m);
      if (m.return_timestamps !== undefined && m.return_timestamps !== null && typeof m.return_timestamps !== 'boolean')
        throw new ApiError('invalid_request', 'return_timestamps must be a boolean.');
      returnTimestamps = m.return_timestamps === true;
      if (over(s) || this.closed) return; // cancelled, timed out or closed meanwhile
      const release = await this.tts.acquire(auth);
      if (over(s) || this.closed) return release();
      s.release = release;
      const deadline = sessionDeadline(auth, startedAt);
      if (deadline)
        s.capTimer = setTimeout(() => {
          // The temporary key's session cap: report it on this stream, then drop the connection.
          this.streamError(id, new ApiError('temp_api_key_session_expired', `Session exceeded the temporary API key's max_session_duration_seconds.`), requestId, true);
          this.closed = true;
          for (const x of this.streams.values()) this.stop(x);
          this.socket.close(1000);
        }, Math.max(0, deadline.getTime() - Date.now()));
      if (s.status === 'starting') s.status = 'active';
      out = this.tts.synthesize(cfg, s.text, s.ac.signal);
    } catch (err) {
      if (over(s) || this.closed) return;
      s.status = 'failed';
      this.stop(s);
      return this.streamError(id, err, requestId, true);
    }
    let metered: Promise<void> | undefined;
    const meter = () => (metered ??= this.tts.recordUsage(auth, cfg, { requestId, startedAt, characters: s.textChars, seconds: out.seconds() }));
    try {
      for await (const chunk of out.chunks) {
        if (s.ac.signal.aborted) break;
        const frame: Record<string, unknown> = { stream_id: id, audio: chunk.audio.toString('base64') };
        if (returnTimestamps && chunk.timestamps) frame.timestamps = chunk.timestamps;
        this.send(frame);
      }
      if (over(s) || this.closed) return;
      clearTimeout(s.timer);
      clearTimeout(s.capTimer);
      // Metered before the stream's last frame: work that cannot be billed ends in an error, not in audio_end.
      await meter().catch((cause: unknown) => {
        throw new ApiError('internal_error', `The usage of stream ${id} could not be recorded, so the stream failed; try again later.`, { cause });
      });
      if (over(s) || this.closed) return;
      if (out.truncated()) {
        // Generation stopped at the cap: the last chunk went out without audio_end; error, then terminated.
        s.status = 'failed';
        this.stop(s);
        return this.streamError(id, new ApiError('max_audio_duration_reached', 'Generated audio reached the 2-minute limit; the rest of the text was not spoken.'), requestId, true);
      }
      const final: Record<string, unknown> = { stream_id: id, audio_end: true };
      const rest = out.takeTimestamps();
      if (returnTimestamps && rest) final.timestamps = rest;
      this.send(final);
      s.status = 'ended';
      this.send({ stream_id: id, terminated: true });
    } catch (err) {
      if (over(s) || this.closed) return;
      s.status = 'failed';
      this.stop(s);
      this.streamError(id, err, requestId, true);
    } finally {
      clearTimeout(s.timer);
      clearTimeout(s.capTimer);
      s.release?.();
      this.endedOne();
      // A cancelled, cut or failed stream is metered for the audio made so far.
      if (!metered) void meter().catch((err: unknown) => this.ctx.log.error({ err, stream_id: id }, 'tts usage not recorded'));
    }
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

  private text(id: string, m: Record<string, unknown>): void {
    const s = this.streams.get(id);
    const requestId = s?.requestId ?? newRequestId();
    if (!s) return this.streamError(id, new ApiError('invalid_stream_state', `text for unknown stream ${id}.`), requestId, false);
    if (s.status === 'finishing' || s.status === 'ended') return this.streamError(id, new ApiError('invalid_stream_state', `text after text_end on stream ${id}.`), requestId, false);
    if (s.status === 'cancelled' || s.status === 'failed') return; // the stream is over; late text is dropped
    const text = m.text ?? '';
    const end = m.text_end ?? false;
    if (typeof text !== 'string' || typeof end !== 'boolean') {
      s.status = 'failed';
      this.stop(s);
      return this.streamError(id, new ApiError('invalid_request', 'text must be a string and text_end a boolean.'), requestId, true);
    }
    s.textChars += text.length;
    if (s.textChars > this.ctx.settings.ttsMaxTextChars) {
      s.status = 'failed';
      this.stop(s);
      return this.streamError(id, new ApiError('invalid_request', `Stream text is longer than ${this.ctx.settings.ttsMaxTextChars} characters.`), requestId, true);
    }
    s.text.push(text);
    if (end) {
      clearTimeout(s.timer);
      s.status = 'finishing';
      s.text.end();
    } else this.armTimeout(s);
  }
}
