// One OpenAI Realtime transcription session, a renderer over a live session (modules/realtime/session.ts: the same
// keys, tenancy, limits, metering and engines as /transcribe-websocket). Transport-free: client events come in as
// text, server events leave through OpenAiRealtimeIO; the live session's typed events become turns and items.
//
//   connect ──▶ session.created ──session.update…──▶ first append: the native session starts (auth, limits, engine)
//
// Turns: with server VAD an engine endpoint ends the turn: speech_stopped, committed, its deltas, completed.
// speech_started comes with the turn's first recognised word. `input_audio_buffer.commit` ends the turn by hand: the
// live session's `finalize`, whose finalized mark completes the item. Words are routed to items by time (the audio offset of each
// commit), so words still being decoded land in the item their audio belongs to. `clear` drops the words of the
// uncommitted audio. Deltas are the item's final words, sent once the item is committed (OpenAI's order). The turns
// and items are realtime-turns.ts's; here, the client's events, the session's settings and the live session.
import { ApiError } from '../../wire/api-error.js';
import { approximateTokens, checkRealtimeConfig, MAX_CONTEXT_CHARS, MAX_CONTEXT_TOKENS } from '../realtime/config.js';
import type { RealtimeService, RealtimeSession } from '../realtime/service.js';
import { openAiErrorBody } from './errors.js';
import {
  applyBeta,
  applyGa,
  BYTES_PER_MS,
  defaultSettings,
  lockedFields,
  nativeConfig,
  nativeModel,
  renderBeta,
  renderGa,
  type TranscriptionSettings,
} from './realtime-config.js';
import { type ClientEvent, ClientEventError, fieldError, parseClientEvent, type RealtimeErrorBody, type ServerEvent } from './realtime-schemas.js';
import { newId, RealtimeTurns } from './realtime-turns.js';
import { contextChars } from './schemas.js';

export interface OpenAiRealtimeIO {
  send(event: Record<string, unknown>): void;
  /** Close the connection normally after the events sent so far. */
  close(): void;
}

export interface OpenAiRealtimeOptions {
  /** The beta protocol (OpenAI-Beta: realtime=v1): transcription_session.created first. */
  beta: boolean;
  /** The `model` of the connection URL, the transcription model until a session update names one. */
  urlModel?: string;
  /** Real-time model serving OpenAI's transcription model names (whisper-1, gpt-4o-transcribe, ...). */
  defaultModel: string;
  requestId: string;
  handshakeKey?: string;
}

/** A commit needs this much audio (OpenAI's input_audio_buffer_commit_empty). */
const MIN_COMMIT_MS = 100;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class OpenAiRealtimeSession {
  private settings: TranscriptionSettings;
  private readonly id = newId('sess');
  private native: RealtimeSession | undefined;
  /** The session ended (error, server stop or client gone): nothing more is sent. */
  private ended = false;
  private appendedBytes = 0;
  private readonly turns = new RealtimeTurns({
    emit: (event) => this.emit(event),
    settings: () => this.settings,
    appendedMs: () => this.appendedMs,
  });
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly service: RealtimeService,
    private readonly io: OpenAiRealtimeIO,
    private readonly opts: OpenAiRealtimeOptions,
  ) {
    this.settings = defaultSettings(opts.urlModel);
  }

  get backlogBytes(): number {
    return this.native?.backlogBytes ?? 0;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** The connection is open: announce the session; audio is due within the real-time audio timeout. */
  start(): void {
    this.emitSession(this.opts.beta ? 'transcription_session.created' : 'session.created');
    const timeoutMs = this.service.opts.audioTimeoutMs;
    this.idleTimer = setTimeout(
      () => this.fail(new ApiError('request_timeout', `Request timeout: no audio received for ${Math.round(timeoutMs / 100) / 10} seconds.`)),
      timeoutMs,
    );
  }

  /** A text message from the client. */
  text(text: string): void {
    if (this.ended) return;
    let event: ClientEvent;
    try {
      event = parseClientEvent(text);
      this.handle(event);
    } catch (err) {
      if (err instanceof ClientEventError)
        return this.emitError({ type: 'invalid_request_error', code: err.code, message: err.message, param: err.param, event_id: err.eventId });
      this.fail(err);
    }
  }

  /** Binary messages are not part of the protocol (audio travels base64 in input_audio_buffer.append). */
  binary(): void {
    if (this.ended) return;
    this.emitError({
      type: 'invalid_request_error',
      code: 'invalid_event',
      message: 'Binary messages are not accepted: send audio as base64 in input_audio_buffer.append events.',
      param: null,
      event_id: null,
    });
  }

  /** The client went away: free everything at once, send nothing. */
  gone(): void {
    this.ended = true;
    clearTimeout(this.idleTimer);
    this.native?.gone();
  }

  /** End the session with one error event, then close (a failure of the session, not of one event). */
  fail(err: unknown): void {
    if (this.ended) return;
    if (this.native && !this.native.closed) return this.native.fail(err); // its error event comes back to the sink
    const apiErr = err instanceof ApiError ? err : new ApiError('internal_error', 'Internal server error.', { cause: err });
    this.emitError({ ...openAiErrorBody(apiErr).error, event_id: null });
    this.end();
  }

  private handle(event: ClientEvent): void {
    const eventId = event.event_id ?? null;
    switch (event.type) {
      case 'session.update':
        return this.update(applyGa(this.settings, event.session, eventId), 'ga', eventId);
      case 'transcription_session.update':
        return this.update(applyBeta(this.settings, event.session), 'beta', eventId);
      case 'input_audio_buffer.append':
        return this.append(event.audio, eventId);
      case 'input_audio_buffer.commit':
        return this.commitByClient(eventId);
      case 'input_audio_buffer.clear':
        return this.turns.clear(this.appendedMs);
    }
  }

  /** Apply a session update (GA or beta shape, answered in the same shape). */
  private update(next: TranscriptionSettings, shape: 'ga' | 'beta', eventId: string | null): void {
    const transcription = shape === 'ga' ? 'session.audio.input.transcription' : 'session.input_audio_transcription';
    // Refused here, the update is an error of this event; at the first audio it would end the session.
    try {
      this.service.deps.models.resolve(nativeModel(next.model, this.opts.defaultModel), 'real_time');
    } catch (err) {
      if (err instanceof ApiError) throw new ClientEventError('model_not_found', err.message, `${transcription}.model`, eventId);
      throw err;
    }
    // The prompt is the context's text, the keywords its terms: capped together, as the native context is.
    const context = next.keywords.length ? { at: `${transcription}.keywords`, what: 'with the prompt is' } : { at: `${transcription}.prompt`, what: 'is' };
    const chars = contextChars(next.prompt, next.keywords);
    if (chars > MAX_CONTEXT_CHARS) throw fieldError('invalid_value', context.at, `${context.what} over ${MAX_CONTEXT_CHARS} characters (${chars})`, eventId);
    const tokens = approximateTokens([next.prompt ?? '', ...next.keywords].join(' '));
    if (tokens > MAX_CONTEXT_TOKENS)
      throw fieldError('invalid_value', context.at, `${context.what} over ${MAX_CONTEXT_TOKENS} tokens (about ${tokens})`, eventId);
    if (this.native) {
      const was = lockedFields(this.settings, shape);
      const now = lockedFields(next, shape);
      const changed = Object.keys(was).find((k) => JSON.stringify(was[k]) !== JSON.stringify(now[k]));
      if (changed)
        throw fieldError(
          'invalid_value',
          changed,
          `cannot change once audio has been appended (the recognizer runs with ${JSON.stringify(was[changed])})`,
          eventId,
        );
    }
    this.settings = next;
    this.emitSession(shape === 'ga' ? 'session.updated' : 'transcription_session.updated');
  }

  private append(audio: string, eventId: string | null): void {
    const b64 = audio.replace(/\s+/g, '');
    if (b64.length % 4 === 1 || !BASE64.test(b64)) throw fieldError('invalid_value', 'audio', 'is not valid base64', eventId);
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length === 0) return; // an empty message would end the native stream
    if (!this.native) this.startNative();
    this.appendedBytes += bytes.length;
    this.native!.audio(bytes);
  }

  private startNative(): void {
    clearTimeout(this.idleTimer);
    this.native = this.service.open(
      {
        update: (update) => {
          if (!this.ended) this.turns.update(update);
        },
        finished: (update) => {
          if (!this.ended) this.turns.update(update);
          this.turns.finished();
          this.end();
        },
        error: (err) => {
          this.emitError({ ...openAiErrorBody(err).error, event_id: null });
          this.end();
        },
      },
      this.opts.requestId,
    );
    this.native.start({ apiKey: this.opts.handshakeKey, config: checkRealtimeConfig(nativeConfig(this.settings, this.opts.defaultModel)) });
  }

  private get appendedMs(): number {
    return this.appendedBytes / BYTES_PER_MS[this.settings.format];
  }

  private commitByClient(eventId: string | null): void {
    const bufferMs = this.appendedMs - this.turns.openStartMs;
    if (!this.native || bufferMs < MIN_COMMIT_MS)
      throw new ClientEventError(
        'input_audio_buffer_commit_empty',
        `Error committing input audio buffer: buffer too small. Expected at least ${MIN_COMMIT_MS}ms of audio, but buffer only has ${Math.max(0, bufferMs).toFixed(2)}ms of audio.`,
        null,
        eventId,
      );
    this.turns.commitByClient(this.appendedMs);
    this.native.finalize();
  }

  private emitSession(type: 'session.created' | 'session.updated' | 'transcription_session.created' | 'transcription_session.updated'): void {
    const expiresAt = Math.floor(Date.now() / 1000) + Math.round(this.service.opts.maxDurationMs / 1000);
    const session = type.startsWith('session.') ? renderGa(this.settings, this.id, expiresAt) : renderBeta(this.settings, this.id, expiresAt);
    this.emit({ type, session } as ServerEvent);
  }

  private emitError(error: RealtimeErrorBody): void {
    this.emit({ type: 'error', error });
  }

  private emit(event: ServerEvent): void {
    if (!this.ended) this.io.send({ event_id: newId('event'), ...event });
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idleTimer);
    this.io.close();
  }
}
