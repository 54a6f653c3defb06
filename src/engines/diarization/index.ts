// The diarization engine this build ships: VAD speech regions, MFCC frames, BIC clustering (offline for files,
// online for streams). With a speaker-embedding model installed, files go to EmbeddingDiarizer instead
// (embedding-diarizer.ts), which keeps this one for live streams.
import { fileURLToPath } from 'node:url';
import { loadVadOffThread } from '../../audio/audio-thread.js';
import { defaultLog, type Vad, type VadLog } from '../../audio/vad.js';
import { BATCH_NICE } from '../../lib/priority.js';
import { WorkerLane } from '../../lib/worker-lane.js';
import type { DiarizeRequest, DiarizeResult } from './diarize-worker-messages.js';
import type { DiarizationEngine, DiarizationStream, DiarizeOptions, MeasureOptions, SpeakerTurn, StreamOptions, VoicePrint } from './interface.js';
import { identifyLive, LiveNameBook, type LiveNames } from './live-identifier.js';
import { clusterOffline, type OfflineClusterOptions } from './offline-clusterer.js';
import { OnlineClusterer, type OnlineClusterOptions, type OpenGuess, speakerOfWindows, type WindowChanges, type WindowLabel } from './online-clusterer.js';
import { speakerRange } from './speaker-count.js';
import { SpeakerFrameExtractor, type SpeakerFrame } from './speech-frames.js';
import { TurnStats } from './turn-stats.js';

export type { DiarizationEngine, DiarizationStream, SpeakerTurn } from './interface.js';

export interface BicDiarizerOptions {
  offline?: OfflineClusterOptions;
  online?: OnlineClusterOptions;
  /** A loaded VAD; by default Silero (energy fallback) is loaded on first use. */
  vad?: Vad;
  log?: VadLog;
}

type Request = DiarizeRequest extends infer R ? (R extends DiarizeRequest ? Omit<R, 'id'> : never) : never;

const workerFile = fileURLToPath(new URL('./diarize-worker.js', import.meta.url));
/** Files are diarized on this thread, at batch priority (inline when running from sources, without a compiled worker). */
const fileLane = new WorkerLane<Request, DiarizeResult>(workerFile, { nice: BATCH_NICE });
/** Live streams on this one, at the server's own priority (inline likewise without a compiled worker). */
const liveLane = new WorkerLane<Request, DiarizeResult>(workerFile);
let nextJob = 0;

export class BicDiarizer implements DiarizationEngine {
  readonly name = 'bic';
  /** Detectors by lane: files on one worker thread, live sessions on another (audio/audio-thread.ts). */
  private readonly vads: { live?: Promise<Vad>; batch?: Promise<Vad> } = {};

  constructor(private readonly options: BicDiarizerOptions = {}) {
    if (options.vad) this.vads.live = this.vads.batch = Promise.resolve(options.vad);
  }

  private loadVad(lane: 'live' | 'batch'): Promise<Vad> {
    return (this.vads[lane] ??= loadVadOffThread({ log: this.options.log, lane }));
  }

  async diarize(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: DiarizeOptions = {}): Promise<SpeakerTurn[]> {
    // A hint out of range fails before the audio is read.
    speakerRange(options.speakers);
    const offline = { ...this.options.offline, speakers: options.speakers };
    if (!this.options.vad && fileLane.available()) return this.diarizeOffThread(pcm, offline, options.signal);
    const extractor = new SpeakerFrameExtractor((await this.loadVad('batch')).createStream());
    const frames: SpeakerFrame[] = [];
    for await (const chunk of pcm) {
      options.signal?.throwIfAborted();
      for (const f of await extractor.push(chunk)) frames.push(f);
    }
    for (const f of await extractor.flush()) frames.push(f);
    options.signal?.throwIfAborted();
    return clusterOffline(frames, offline);
  }

  /** diarize() on the file lane's thread: the PCM goes over piece by piece (each awaited: no unbounded queue). */
  private async diarizeOffThread(
    pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    offline: OfflineClusterOptions,
    signal: AbortSignal | undefined,
  ): Promise<SpeakerTurn[]> {
    const job = nextJob++;
    const opened = (await fileLane.call({ op: 'open', job, vad: {}, offline })) as Extract<DiarizeResult, { opened: true }>;
    if (opened.warning) (this.options.log ?? defaultLog)('warn', opened.warning.msg, opened.warning.detail);
    let ended = false;
    try {
      for await (const chunk of pcm) {
        signal?.throwIfAborted();
        // A copy of exactly these bytes: a view would send its whole underlying buffer.
        await fileLane.call({ op: 'push', job, pcm: new Uint8Array(chunk) });
      }
      signal?.throwIfAborted();
      ended = true;
      return ((await fileLane.call({ op: 'end', job })) as Extract<DiarizeResult, { turns: unknown }>).turns;
    } finally {
      if (!ended) void fileLane.call({ op: 'close', job }).catch(() => undefined);
    }
  }

  async measure(pcm: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, options: MeasureOptions = {}): Promise<Map<number, VoicePrint>> {
    const { signal, turns } = options;
    if (this.options.vad || !fileLane.available()) {
      const extractor = new SpeakerFrameExtractor((await this.loadVad('batch')).createStream());
      const stats = new TurnStats(turns);
      for await (const chunk of pcm) {
        signal?.throwIfAborted();
        stats.add(await extractor.push(chunk));
      }
      stats.add(await extractor.flush());
      return new Map(stats.prints());
    }
    const job = nextJob++;
    const opened = (await fileLane.call({ op: 'measure-open', job, vad: {}, turns })) as Extract<DiarizeResult, { opened: true }>;
    if (opened.warning) (this.options.log ?? defaultLog)('warn', opened.warning.msg, opened.warning.detail);
    let ended = false;
    try {
      for await (const chunk of pcm) {
        signal?.throwIfAborted();
        await fileLane.call({ op: 'measure-push', job, pcm: new Uint8Array(chunk) });
      }
      signal?.throwIfAborted();
      ended = true;
      return new Map(((await fileLane.call({ op: 'measure-end', job })) as Extract<DiarizeResult, { prints: unknown }>).prints);
    } finally {
      if (!ended) void fileLane.call({ op: 'close', job }).catch(() => undefined);
    }
  }

  createStream(options: StreamOptions = {}): DiarizationStream {
    const online = { ...this.options.online, speakers: options.speakers };
    // A hint out of range fails here, before the stream is opened.
    speakerRange(options.speakers);
    if (!this.options.vad && liveLane.available()) return this.streamOffThread(options, online);
    const extractor = this.loadVad('live').then((vad) => new SpeakerFrameExtractor(vad.createStream()));
    const clusterer = new OnlineClusterer(online);
    const names = new LiveNameBook();
    const identify = () => names.update(identifyLive(clusterer.windows, clusterer.openWindow(), options.enrolled, options.enrolled?.rule));
    return {
      async push(pcm) {
        clusterer.add(await (await extractor).push(pcm));
        identify();
      },
      async flush() {
        clusterer.add(await (await extractor).flush());
        clusterer.flush();
        identify();
      },
      speakerAt: (startMs, endMs) => clusterer.speakerAt(startMs, endMs),
      nameAt: (startMs, endMs) => names.nameAt(clusterer.windows, startMs, endMs, clusterer.openGuess()),
      close() {},
    };
  }

  /**
   * A live stream on the live lane's thread: frames and clustering there, and each push answers with the windows
   * that changed, so speakerAt() reads a copy here without waiting.
   */
  private streamOffThread(options: StreamOptions, online: OnlineClusterOptions): DiarizationStream {
    const job = nextJob++;
    const log = this.options.log ?? defaultLog;
    const opened = liveLane.call({ op: 'live-open', job, vad: {}, online, enrolled: options.enrolled }).then((r) => {
      const warning = (r as Extract<DiarizeResult, { opened: true }>).warning;
      if (warning) log('warn', warning.msg, warning.detail);
    });
    const windows: WindowLabel[] = [];
    let open: OpenGuess | undefined;
    const names = new LiveNameBook();
    let closed = false;
    const apply = (r: DiarizeResult) => {
      const reply = r as { changes: WindowChanges; names?: LiveNames };
      const { from, windows: changed, open: guess } = reply.changes;
      windows.splice(from, windows.length - from, ...changed);
      open = guess;
      names.update(reply.names);
    };
    const close = () => {
      if (closed) return;
      closed = true;
      void opened.then(() => liveLane.call({ op: 'close', job })).catch(() => undefined);
    };
    return {
      async push(pcm) {
        await opened;
        // A copy of exactly these bytes: a view would send its whole underlying buffer.
        apply(await liveLane.call({ op: 'live-push', job, pcm: new Uint8Array(pcm) }));
      },
      async flush() {
        await opened;
        apply(await liveLane.call({ op: 'live-flush', job }));
        close();
      },
      speakerAt: (startMs, endMs) => speakerOfWindows(windows, startMs, endMs, open),
      nameAt: (startMs, endMs) => names.nameAt(windows, startMs, endMs, open),
      close,
    };
  }
}
