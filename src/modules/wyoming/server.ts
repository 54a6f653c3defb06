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
import { DEFAULT_LIMITS, encodeEvent, EventParser, FramingError, type FramingLimits, type WyomingEvent } from './framing.js';
import { WyomingService } from './service.js';
import { WyomingSynthesis } from './synthesis.js';
import { resolveWyomingTenant } from './tenant.js';
import { WyomingRequestError, WyomingTranscriber } from './transcription.js';

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

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

class Connection {
  private readonly parser: EventParser;
  private chain: Promise<void> = Promise.resolve();
  private readonly ac = new AbortController();
  /** The utterance being transcribed. */
  private readonly stt: WyomingTranscriber;
  /** The connection's synthesis, whole or streamed. */
  private readonly synthesis: WyomingSynthesis;
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
    this.synthesis = new WyomingSynthesis(
      service,
      (type, data, payload) => this.send(type, data, payload),
      this.ac.signal,
      (err, eventType) => this.errorData(err, eventType),
    );
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
    this.synthesis.dropStream();
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

  /** The `error` event's data for what a request threw; what the client did not cause is logged and kept vague. */
  private errorData(err: unknown, eventType: string): { text: string; code: string } {
    if (err instanceof WyomingRequestError) return { text: err.message, code: err.code };
    if (err instanceof ApiError) return { text: err.message, code: err.type };
    this.log.error({ err, event: eventType }, 'wyoming request failed');
    return { text: 'The server could not complete the request.', code: 'internal_error' };
  }

  private async handle(event: WyomingEvent): Promise<void> {
    if (this.ac.signal.aborted) return;
    await this.synthesis.block;
    try {
      await this.dispatch(event);
    } catch (err) {
      if (this.ac.signal.aborted) return;
      await this.send('error', this.errorData(err, event.type));
    }
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
      case 'synthesize':
        return this.synthesis.synthesize(d);
      case 'synthesize-start':
        return this.synthesis.startStream(d);
      case 'synthesize-chunk':
        return this.synthesis.streamChunk(d);
      case 'synthesize-stop':
        return this.synthesis.stopStream();
      default:
        throw new WyomingRequestError(
          'unknown_event',
          `Event type "${event.type}" is not served here (describe, ping, transcribe, audio-start, audio-chunk, audio-stop, synthesize, synthesize-start, synthesize-chunk, synthesize-stop).`,
        );
    }
  }
}
