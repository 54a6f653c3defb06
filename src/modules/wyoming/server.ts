// The Wyoming TCP server (Home Assistant's voice protocol): one connection is one client; its events are handled
// one after another, in order. Events served:
//   describe                                          → info
//   ping                                              → pong
//   transcribe? audio-start audio-chunk* audio-stop   → transcript-start, transcript-chunk, transcript-stop, transcript
//   synthesize {text, voice?}                         → audio-start, audio-chunk*, audio-stop
// A request the server cannot serve (unknown model or voice, bad audio format, unknown event type) gets an `error`
// event {text, code} and the connection stays usable; a stream that cannot be read further (a malformed header line,
// data or payload over the caps) gets an `error` event and is closed, as does a client that completes no event within
// PARLANCE_WYOMING_IDLE_TIMEOUT_SECONDS of its last answer (`request_timeout`); one that stops reading the answers is
// cut after as long. Wyoming has no authentication: the listener
// binds to loopback by default (PARLANCE_WYOMING_HOST) and everything is metered to one project.
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ConfigError, type Settings } from '../../config/settings.js';
import type { AppContext } from '../../app-context.js';
import type { TenancyService } from '../tenancy/service.js';
import { ApiError } from '../../wire/api-error.js';
import { DEFAULT_LIMITS, encodeEvent, EventParser, FramingError, type FramingLimits, type WyomingEvent } from './framing.js';
import { audioFormatOf, UtteranceAudio, type WyomingAudioFormat, WyomingRequestError, WyomingService, type WyomingTenant } from './service.js';

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

/** The project Wyoming requests are metered to: PARLANCE_WYOMING_PROJECT, else the first organization's first project. */
export async function resolveWyomingTenant(tenancy: Pick<TenancyService, 'project' | 'allProjects'>, projectId: string): Promise<WyomingTenant> {
  if (projectId) {
    const project = await tenancy.project(projectId);
    if (!project || project.deleted_at) throw new ConfigError(`PARLANCE_WYOMING_PROJECT: project ${projectId} does not exist (or was deleted)`);
    return { organizationId: project.organization_id, projectId: project.id };
  }
  const project = (await tenancy.allProjects())[0];
  if (!project)
    throw new ConfigError('the Wyoming server needs a project to meter to: set PARLANCE_WYOMING_PROJECT (no organization with a project exists yet)');
  return { organizationId: project.organization_id, projectId: project.id };
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

/** Start the Wyoming listener on PARLANCE_WYOMING_HOST:PARLANCE_WYOMING_PORT. */
export async function startWyoming(ctx: AppContext, settings: Settings, limits: FramingLimits = DEFAULT_LIMITS): Promise<WyomingListener> {
  const tenant = await resolveWyomingTenant(ctx.tenancy, settings.wyomingProject);
  const log = ctx.log.child({ surface: 'wyoming' });
  const service = new WyomingService({
    models: ctx.models,
    tts: ctx.tts,
    billing: ctx.billing,
    meter: ctx.tts.opts.meter,
    tenant,
    version: packageVersion(),
    // The public URL (set, or derived from the listening address: the error reference URL's base).
    attributionUrl: settings.publicUrl || ctx.errorReferenceUrl().replace(/\/docs\/errors$/, ''),
    maxAudioSeconds: settings.wyomingMaxAudioSeconds,
    formatText: settings.textFormatting,
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

interface Transcribing {
  request: { name?: string; language?: string };
  audio: UtteranceAudio | undefined;
  format: WyomingAudioFormat | undefined;
  /** Set once the utterance failed (too long, bad format): chunks until audio-stop are dropped. */
  failed: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

class Connection {
  private readonly parser: EventParser;
  private chain: Promise<void> = Promise.resolve();
  private readonly ac = new AbortController();
  private stt: Transcribing | undefined;
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
    this.stt?.audio?.abort();
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

  private async handle(event: WyomingEvent): Promise<void> {
    if (this.ac.signal.aborted) return;
    try {
      await this.dispatch(event);
    } catch (err) {
      if (this.ac.signal.aborted) return;
      if (err instanceof WyomingRequestError || err instanceof ApiError) {
        const code = err instanceof ApiError ? err.type : err.code;
        await this.send('error', { text: err.message, code });
        return;
      }
      this.log.error({ err, event: event.type }, 'wyoming request failed');
      await this.send('error', { text: 'The server could not complete the request.', code: 'internal_error' });
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
        this.stt?.audio?.abort();
        this.stt = { request: { name: str(d.name), language: str(d.language) }, audio: undefined, format: undefined, failed: false };
        return;
      case 'audio-start': {
        const stt = (this.stt ??= { request: {}, audio: undefined, format: undefined, failed: false });
        stt.audio?.abort();
        stt.audio = undefined;
        stt.failed = false;
        try {
          stt.format = audioFormatOf(d);
        } catch (err) {
          stt.failed = true;
          throw err;
        }
        return;
      }
      case 'audio-chunk': {
        const stt = (this.stt ??= { request: {}, audio: undefined, format: undefined, failed: false });
        if (stt.failed) return;
        try {
          // A chunk carries its own format; one without falls back to audio-start's.
          const format = d.rate === undefined && stt.format ? stt.format : audioFormatOf(d);
          stt.audio ??= new UtteranceAudio(this.service.maxAudioSeconds);
          stt.audio.write(format, event.payload ?? Buffer.alloc(0));
        } catch (err) {
          stt.failed = true;
          stt.audio?.abort();
          throw err;
        }
        return;
      }
      case 'audio-stop': {
        const stt = this.stt;
        this.stt = undefined;
        if (!stt || stt.failed) return;
        const pcm = stt.audio ? await stt.audio.finish() : [];
        const { text, language } = await this.service.transcribe(pcm, stt.request, this.ac.signal);
        await this.send('transcript-start', { language });
        if (text) await this.send('transcript-chunk', { text });
        await this.send('transcript-stop');
        return this.send('transcript', { text, language });
      }
      case 'synthesize': {
        const voice = d.voice !== null && typeof d.voice === 'object' && !Array.isArray(d.voice) ? (d.voice as Record<string, unknown>) : undefined;
        let format: { rate: number; width: number; channels: number } | undefined;
        let pending: Buffer = Buffer.alloc(0);
        const chunkBytes = SAMPLES_PER_CHUNK * 2;
        return this.service.synthesize(
          d.text,
          voice,
          {
            start: async (rate) => {
              format = { rate, width: 2, channels: 1 };
              await this.send('audio-start', format);
            },
            chunk: async (pcm) => {
              pending = pending.length ? Buffer.concat([pending, pcm]) : pcm;
              while (pending.length >= chunkBytes) {
                await this.send('audio-chunk', format, pending.subarray(0, chunkBytes));
                pending = pending.subarray(chunkBytes);
              }
            },
            end: async () => {
              if (pending.length) await this.send('audio-chunk', format, pending);
              await this.send('audio-stop');
            },
          },
          this.ac.signal,
        );
      }
      default:
        throw new WyomingRequestError(
          'unknown_event',
          `Event type "${event.type}" is not served here (describe, ping, transcribe, audio-start, audio-chunk, audio-stop, synthesize).`,
        );
    }
  }
}
