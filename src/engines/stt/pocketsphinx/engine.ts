// The pocketsphinx STT engine: English (Debian's pocketsphinx-en-us model), word timings from the segment iterator,
// word posteriors as confidences, partial results while streaming. Each loaded model is a pool of worker threads,
// one native decoder per thread.
import type {
  LoadOptions,
  Recognizer,
  StreamEvents,
  StreamingSession,
  StreamOptions,
  SttEngine,
  SttFeatures,
  Token,
  TranscribeOptions,
} from '../interface.js';
import { EngineUnavailableError } from '../interface.js';
import { findAddon } from './addon.js';
import {
  checkModelFiles,
  resolvePocketsphinxOptions,
  type PocketsphinxOptions,
  type ResolvedPocketsphinxOptions,
} from './options.js';
import { DecoderPool, type PoolStats, type SessionChannel } from './pool.js';

export const POCKETSPHINX_FEATURES: SttFeatures = {
  timestamps: true,
  confidence: true,
  streaming: true,
  diarization: false,
  translation: false,
};

export class PocketsphinxEngine implements SttEngine {
  readonly id = 'pocketsphinx';
  readonly languages = ['en'] as const;
  readonly features = POCKETSPHINX_FEATURES;
  private readonly options: ResolvedPocketsphinxOptions;
  private readonly loaded = new Map<string, Promise<PocketsphinxRecognizer>>();

  constructor(options: PocketsphinxOptions = {}) {
    this.options = resolvePocketsphinxOptions(options);
  }

  load(engineModel: string, options: LoadOptions = {}): Promise<PocketsphinxRecognizer> {
    let loading = this.loaded.get(engineModel);
    if (!loading) {
      loading = this.start(engineModel);
      this.loaded.set(engineModel, loading);
      // A failed load is not cached: installing the missing package and retrying must work without a restart.
      loading.catch(() => this.loaded.delete(engineModel));
    }
    const signal = options.signal;
    if (!signal) return loading;
    signal.throwIfAborted();
    return Promise.race([
      loading,
      new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
    ]);
  }

  async close(): Promise<void> {
    const all = [...this.loaded.values()];
    this.loaded.clear();
    await Promise.all(all.map((p) => p.then((r) => r.close(), () => {})));
  }

  private async start(engineModel: string): Promise<PocketsphinxRecognizer> {
    const paths = this.options.models[engineModel];
    if (!paths) {
      throw new EngineUnavailableError(
        `pocketsphinx has no model '${engineModel}'`,
        `configured models: ${Object.keys(this.options.models).join(', ') || 'none'}`,
      );
    }
    checkModelFiles(paths);
    const addonPath = findAddon(this.options.addonPath);
    const pool = new DecoderPool(
      { addonPath, model: paths, decoderArgs: this.options.decoderArgs, maxUtteranceMs: this.options.maxUtteranceMs },
      this.options.poolSize,
    );
    try {
      await pool.start();
    } catch (err) {
      throw new EngineUnavailableError(`pocketsphinx could not load model '${engineModel}': ${(err as Error).message}`);
    }
    return new PocketsphinxRecognizer(this.id, engineModel, pool, this.options);
  }
}

export class PocketsphinxRecognizer implements Recognizer {
  constructor(
    readonly engineId: string,
    readonly engineModel: string,
    private readonly pool: DecoderPool,
    private readonly options: ResolvedPocketsphinxOptions,
  ) {}

  stats(): PoolStats {
    return this.pool.stats();
  }

  async transcribe(pcm: AsyncIterable<Uint8Array>, options: TranscribeOptions = {}): Promise<Token[]> {
    const { signal, onTokens } = options;
    const tokens: Token[] = [];
    const channel = await this.pool.open(
      { mode: 'batch' },
      {
        final: (batch) => {
          tokens.push(...batch);
          onTokens?.(batch);
        },
      },
      signal,
    );
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      if (!signal) return;
      onAbort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {});
    try {
      await Promise.race([
        (async () => {
          for await (const chunk of pcm) {
            signal?.throwIfAborted();
            await channel.write(chunk);
          }
          await channel.end();
        })(),
        aborted,
      ]);
      return tokens;
    } catch (err) {
      channel.cancel();
      throw err;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }

  async stream(options: StreamOptions & { signal?: AbortSignal } = {}): Promise<StreamingSession> {
    const session = new PocketsphinxStream();
    const channel = await this.pool.open(
      {
        mode: 'stream',
        stream: {
          endpointSilenceMs: options.endpointSilenceMs ?? this.options.endpointSilenceMs,
          partialIntervalMs: options.partialIntervalMs ?? this.options.partialIntervalMs,
        },
      },
      {
        partial: (t) => session.emit('partial', t),
        final: (t) => session.emit('final', t),
        error: (e) => session.emit('error', e),
      },
      options.signal,
    );
    session.attach(channel);
    return session;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

type Listeners = { [E in keyof StreamEvents]: Set<StreamEvents[E]> };

class PocketsphinxStream implements StreamingSession {
  private channel!: SessionChannel;
  private readonly listeners: Listeners = { partial: new Set(), final: new Set(), error: new Set() };
  private isClosed = false;
  private failure: Error | undefined;

  /** @internal */
  attach(channel: SessionChannel): void {
    this.channel = channel;
  }

  get audioMs(): number {
    return Math.round(this.channel.sentMs);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  on<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this {
    (this.listeners[event] as Set<StreamEvents[E]>).add(listener);
    return this;
  }

  off<E extends keyof StreamEvents>(event: E, listener: StreamEvents[E]): this {
    (this.listeners[event] as Set<StreamEvents[E]>).delete(listener);
    return this;
  }

  /** @internal */
  emit<E extends keyof StreamEvents>(event: E, arg: Parameters<StreamEvents[E]>[0]): void {
    if (event === 'error') {
      this.isClosed = true;
      this.failure = arg as Error;
    }
    for (const listener of this.listeners[event]) (listener as (a: typeof arg) => void)(arg);
  }

  write(pcm: Uint8Array): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    return this.channel.write(pcm);
  }

  finalize(): Promise<void> {
    if (this.isClosed) return Promise.reject(this.failure ?? new Error('streaming session is closed'));
    return this.channel.finalize();
  }

  /** Resolves once the last final tokens were emitted; rejects if the session failed. Idempotent. */
  async end(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.isClosed) return;
    this.isClosed = true;
    await this.channel.end();
  }

  abort(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.channel.cancel();
  }
}
