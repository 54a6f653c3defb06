// The Wyoming TCP server (Home Assistant's voice protocol): one connection is one client; its events are handled
// one after another, in order. Events served:
//   describe                                          → info
//   ping                                              → pong
//   transcribe? audio-start audio-chunk* audio-stop   → transcript-start, transcript-chunk, transcript-stop, transcript
//   synthesize {text, voice?}                         → audio-start, audio-chunk*, audio-stop
//   synthesize-start {voice?, text_format?} synthesize-chunk {text}* synthesize-stop
//                                                     → (audio-start, audio-chunk*, audio-stop) per sentence as its
//                                                       text completes (SSML: once whole), then synthesize-stopped
// (a streamed synthesis is one TtsService.speak over all its text; the `synthesize` a client sends inside it, as the
// protocol asks for older servers, is ignored).
// A request the server cannot serve (unknown model or voice, bad audio format, unknown event type) gets an `error`
// event {text, code} and the connection stays usable; a stream that cannot be read further (a malformed header line,
// data or payload over the caps) gets an `error` event and is closed, as does a client that completes no event within
// PARLANCE_WYOMING_IDLE_TIMEOUT_SECONDS of its last answer (`request_timeout`); one that stops reading the answers is
// cut after as long. No authentication: loopback by default (PARLANCE_WYOMING_HOST), metered to one project.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import type { AppContext } from '../../app-context.js';
import { packageVersion } from '../../lib/version.js';
import { ApiError } from '../../wire/api-error.js';
import type { SpeechSink } from '../tts/speak.js';
import { DEFAULT_LIMITS, encodeEvent, EventParser, FramingError, type FramingLimits, type WyomingEvent } from './framing.js';
import { WyomingService, type WyomingTextStream } from './service.js';
import { resolveWyomingTenant } from './tenant.js';
import { WyomingRequestError, WyomingTranscriber } from './transcription.js';

/** Samples per audio-chunk sent (as the reference TTS servers do: 1024). */
const SAMPLES_PER_CHUNK = 1024;
const MAX_CONNECTIONS = 256;
/** After the timeout's `error` event, a peer that does not close its side is cut. */
const CLOSE_GRACE_MS = 1000;
/** Events queued on a connection before its socket is paused, and the level at which it resumes. */
const QUEUE_HIGH = 64;
const QUEUE_LOW = 16;

export interface WyomingListener {
  /** tcp://host:port */
  url: string;
  port: number;
  /** Stop listening and close every connection (work under way is aborted). */
  close(): Promise<void>;
}

/** Start the Wyoming listener on PARLANCE_WYOMING_HOST:PARLANCE_WYOMING_PORT. */
export async function startWyoming(ctx: AppContext, settings: Settings, limits: FramingLimits = DEFAULT_LIMITS): Promise<WyomingListener> {
  const tenant = await resolveWyomingTenant(ctx.tenancy, settings.wyomingProject);
  const log = ctx.log.child({ surface: 'wyoming' });
  const service = new WyomingService({
    models: ctx.models,
    tts: ctx.tts,
    billing: ctx.billing,
    realtime: ctx.realtime,
    meter: ctx.tts.opts.meter,
    formatText: settings.textFormatting,
    tenant,
    version: packageVersion(),
    // The public URL (set, or derived from the listening address: the error reference URL's base).
    attributionUrl: settings.publicUrl || ctx.errorReferenceUrl().replace(/\/docs\/errors$/, ''),
    maxAudioSeconds: settings.wyomingMaxAudioSeconds,
    log,
  });
  const connections = new Set<Connection>();
  const server: Server = createServer((socket) => {
    const conn = new Connection(socket, service, log, limits, settings.wyomingIdleTimeoutSeconds * 1000);
    connections.add(conn);
    socket.once('close', () => {
      conn.abort();
      connections.delete(conn);
    });
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.wyomingPort, settings.wyomingHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.warn({ err }, 'wyoming listener error'));
  const port = (server.address() as AddressInfo).port;
  const host = settings.wyomingHost.includes(':') ? `[${settings.wyomingHost}]` : settings.wyomingHost;
  log.info({ host: settings.wyomingHost, port, project_id: tenant.projectId }, 'wyoming server listening');
  return {
    url: `tcp://${host}:${port}`,
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const c of connections) c.destroy();
      await closed;
    },
  };
}

/** A streamed synthesis (synthesize-start … synthesize-stop) of a connection. */
interface Streaming {
  /** Undefined when synthesize-start was refused. */
  stream: WyomingTextStream | undefined;
  /** Stops its synthesis (and frees its slot). */
  ac: AbortController;
  /** Settles once the synthesis is over: its audio sent and metered, or its `error` event sent. */
  done: Promise<void>;
  /** It failed and said so (an `error` event): its text until synthesize-stop is dropped. */
  failed: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const voiceOf = (d: Record<string, unknown>): Record<string, unknown> | undefined =>
  d.voice !== null && typeof d.voice === 'object' && !Array.isArray(d.voice) ? (d.voice as Record<string, unknown>) : undefined;

class Connection {
  private readonly parser: EventParser;
  private chain: Promise<void> = Promise.resolve();
  private readonly ac = new AbortController();
  /** The utterance being transcribed. */
  private readonly stt: WyomingTranscriber;
  private tts: Streaming | undefined;
  /** The audio block (one sentence of a streamed synthesis) being sent: no other event's answer goes inside it. */
  private block: Promise<void> = Promise.resolve();
  private closed = false;
  /** Events read but not yet handled: a client far ahead of the server is paused (TCP backpressure). */
  private queued = 0;
  /** Runs while the client owes the next event (the server has answered everything). */
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: Socket,
    private readonly service: WyomingService,
    private readonly log: Logger,
    limits: FramingLimits,
    private readonly idleMs: number,
  ) {
    this.parser = new EventParser(limits);
    this.stt = new WyomingTranscriber(service, (type, data) => this.send(type, data));
    socket.setNoDelay(true);
    socket.on('error', () => undefined);
    socket.on('data', (bytes: Buffer) => this.onData(bytes));
    this.awaitEvent();
  }

  /**
   * The client has `idleMs` to complete its next event. Only whole events count: a header whose data or payload never
   * comes, or one trickled a byte at a time, would otherwise hold the connection (and its buffered bytes) for ever.
   */
  private awaitEvent(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.timedOut(), this.idleMs);
  }

  private timedOut(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.pause();
    const text = `Request timeout: no complete event within ${Math.round(this.idleMs / 100) / 10} s.`;
    this.chain = this.chain.then(() => this.send('error', { text, code: 'request_timeout' })).then(() => this.end());
  }

  /** Close after what was written; a peer that does not close its side is cut after a moment. */
  private end(): void {
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  private onData(bytes: Buffer): void {
    if (this.closed) return;
    let events: WyomingEvent[];
    try {
      events = this.parser.push(bytes);
    } catch (err) {
      this.closed = true;
      this.socket.pause();
      clearTimeout(this.idle);
      const e = err instanceof FramingError ? err : new FramingError('invalid_stream', 'The stream could not be read.');
      // Events already read are answered first; then the error, then the connection ends.
      this.chain = this.chain.then(() => this.send('error', { text: e.message, code: e.code })).then(() => this.end());
      return;
    }
    // The server owes answers until these are handled; then the client owes the next event.
    if (events.length) clearTimeout(this.idle);
    for (const event of events) {
      this.queued++;
      this.chain = this.chain.then(async () => {
        await this.handle(event);
        if (--this.queued <= QUEUE_LOW && this.socket.isPaused() && !this.closed) this.socket.resume();
        if (this.queued === 0 && !this.closed) this.awaitEvent();
      });
    }
    if (this.queued >= QUEUE_HIGH) this.socket.pause();
  }

  abort(): void {
    this.closed = true;
    clearTimeout(this.idle);
    this.ac.abort(new Error('client went away'));
    this.stt.abort();
    this.dropStream();
  }

  destroy(): void {
    this.abort();
    this.socket.destroy();
  }

  private send(type: string, data?: Record<string, unknown>, payload?: Buffer): Promise<void> {
    if (this.socket.destroyed || !this.socket.writable) return Promise.resolve();
    return new Promise<void>((resolve) => {
      // A client that stops reading stops the writes (backpressure): one that has not taken a write for idleMs is cut,
      // which aborts the work its request holds (a synthesis and its slot).
      const stalled = setTimeout(() => this.socket.destroy(), this.idleMs);
      // Resolves once written (or the socket failed).
      this.socket.write(encodeEvent({ type, data, payload }), () => {
        clearTimeout(stalled);
        resolve();
      });
    });
  }

  /**
   * `pcm` as audio-chunk events of SAMPLES_PER_CHUNK samples: the rest under a chunk is returned, or sent if `flush`.
   * Stops once `signal` aborts.
   */
  private async sendAudio(
    format: { rate: number; width: number; channels: number } | undefined,
    pcm: Buffer,
    flush: boolean,
    signal?: AbortSignal,
  ): Promise<Buffer> {
    const chunkBytes = SAMPLES_PER_CHUNK * 2;
    let rest = pcm;
    while ((rest.length >= chunkBytes || (flush && rest.length)) && !signal?.aborted) {
      await this.send('audio-chunk', format, rest.subarray(0, chunkBytes));
      rest = rest.subarray(Math.min(chunkBytes, rest.length));
    }
    return rest;
  }

  /** The `error` event's data for what a request threw; what the client did not cause is logged and kept vague. */
  private errorData(err: unknown, eventType: string): { text: string; code: string } {
    if (err instanceof WyomingRequestError) return { text: err.message, code: err.code };
    if (err instanceof ApiError) return { text: err.message, code: err.type };
    this.log.error({ err, event: eventType }, 'wyoming request failed');
    return { text: 'The server could not complete the request.', code: 'internal_error' };
  }

  private async handle(event: WyomingEvent): Promise<void> {
    if (this.ac.signal.aborted) return;
    await this.block;
    try {
      await this.dispatch(event);
    } catch (err) {
      if (this.ac.signal.aborted) return;
      await this.send('error', this.errorData(err, event.type));
    }
  }

  /**
   * synthesize-start: the voice and budget are checked and one synthesis starts, fed by the chunks to come. A refused
   * start still opens the stream, failed, so that the client's chunks are dropped and its synthesize-stop answered.
   */
  private async startStream(d: Record<string, unknown>): Promise<void> {
    if (this.tts && !this.tts.failed)
      throw new WyomingRequestError(
        'invalid_stream_state',
        'A streamed synthesis is already under way on this connection: send synthesize-stop before the next synthesize-start.',
      );
    this.dropStream();
    const s: Streaming = { stream: undefined, ac: new AbortController(), done: Promise.resolve(), failed: true };
    this.tts = s;
    const stream = await this.service.openStream(voiceOf(d), d.text_format);
    if (this.tts !== s || this.ac.signal.aborted) return;
    s.stream = stream;
    s.failed = false;
    s.done = stream.speak(this.sentenceSink(s, stream), s.ac.signal).catch((err: unknown) => this.failStream(s, err));
  }

  /** synthesize-chunk: its text goes to the synthesis, which speaks each sentence once its end is seen. */
  private async streamChunk(d: Record<string, unknown>): Promise<void> {
    const s = this.tts;
    if (!s) throw new WyomingRequestError('invalid_stream_state', 'synthesize-chunk outside a streamed synthesis: send synthesize-start first.');
    if (s.failed) return;
    try {
      if (typeof d.text !== 'string') throw new WyomingRequestError('invalid_request', 'synthesize-chunk needs a text string.');
      s.stream!.text.push(d.text);
    } catch (err) {
      return this.failStream(s, err);
    }
  }

  /** synthesize-stop: the rest of the text is spoken; synthesize-stopped follows its last audio (or its error). */
  private async stopStream(): Promise<void> {
    const s = this.tts;
    if (!s) throw new WyomingRequestError('invalid_stream_state', 'synthesize-stop outside a streamed synthesis: send synthesize-start first.');
    s.stream?.text.end();
    await s.done;
    await this.block;
    if (this.tts === s) this.tts = undefined;
    if (!this.ac.signal.aborted) await this.send('synthesize-stopped');
  }

  /** The stream failed: its synthesis is stopped (its slot freed, what was made metered), and the `error` event sent once. */
  private async failStream(s: Streaming, err: unknown): Promise<void> {
    if (s.failed) return;
    s.failed = true;
    s.ac.abort();
    s.stream?.text.end();
    // After the sentence being sent, cut short.
    await this.block;
    if (!this.ac.signal.aborted) await this.send('error', this.errorData(err, 'synthesize-stream'));
  }

  /** Stop the connection's stream without a word (the connection went, or a failed stream is replaced). */
  private dropStream(): void {
    const s = this.tts;
    if (!s) return;
    this.tts = undefined;
    s.failed = true;
    s.ac.abort();
    s.stream?.text.end();
  }

  /**
   * A streamed synthesis's audio: each segment the engine synthesizes (a sentence, a clause of an overlong one, an
   * SSML break's silence; engines/tts/text.ts) in an audio-start, audio-chunks and audio-stop block of its own, sent
   * once made. The pipeline hands the segments over one chunk each: raw PCM at the voice's own rate is converted chunk
   * for chunk (audio/raw-encode.ts).
   */
  private sentenceSink(s: Streaming, stream: WyomingTextStream): SpeechSink {
    const format = { rate: stream.rate, width: 2, channels: 1 };
    const sentence = async (pcm: Buffer) => {
      await this.send('audio-start', format);
      await this.sendAudio(format, pcm, true, s.ac.signal);
      // Closed even when the synthesis stopped midway.
      await this.send('audio-stop');
    };
    return {
      start: () => undefined,
      audio: (chunk) => (this.block = sentence(chunk.audio)),
      end: (result) => {
        if (result.truncated)
          throw new WyomingRequestError(
            'max_audio_duration_reached',
            `The audio reached this server's limit of ${stream.maxAudioSeconds} s per request; the rest of the text was not spoken.`,
          );
      },
    };
  }

  private async dispatch(event: WyomingEvent): Promise<void> {
    const d = event.data;
    switch (event.type) {
      case 'describe':
        return this.send('info', this.service.info());
      case 'ping':
        return this.send('pong', str(d.text) ? { text: d.text } : {});
      case 'transcribe':
      case 'audio-start':
      case 'audio-chunk':
      case 'audio-stop':
        return this.stt.handle(event);
      case 'synthesize': {
        // Inside a streamed synthesis this is the whole text again, sent for servers that do not stream: already spoken.
        if (this.tts) return;
        let format: { rate: number; width: number; channels: number } | undefined;
        let pending: Buffer = Buffer.alloc(0);
        return this.service.synthesize(
          d.text,
          voiceOf(d),
          {
            start: async (rate) => {
              format = { rate, width: 2, channels: 1 };
              await this.send('audio-start', format);
            },
            chunk: async (pcm) => {
              pending = await this.sendAudio(format, pending.length ? Buffer.concat([pending, pcm]) : pcm, false);
            },
            end: async () => {
              await this.sendAudio(format, pending, true);
              await this.send('audio-stop');
            },
          },
          this.ac.signal,
          d.text_format,
        );
      }
      case 'synthesize-start':
        return this.startStream(d);
      case 'synthesize-chunk':
        return this.streamChunk(d);
      case 'synthesize-stop':
        return this.stopStream();
      default:
        throw new WyomingRequestError(
          'unknown_event',
          `Event type "${event.type}" is not served here (describe, ping, transcribe, audio-start, audio-chunk, audio-stop, synthesize, synthesize-start, synthesize-chunk, synthesize-stop).`,
        );
    }
  }
}
