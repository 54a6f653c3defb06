// The diarization engine this build ships: VAD speech regions, MFCC frames, BIC clustering (offline for files,
// online for streams). A neural speaker-embedding back-end (sherpa-onnx) would implement DiarizationEngine too.
import { loadVadOffThread } from '../../audio/audio-thread.js';
import type { Vad, VadLog } from '../../audio/vad.js';
import type { DiarizationEngine, DiarizationStream, DiarizeOptions, SpeakerTurn } from './interface.js';
import { clusterOffline, type OfflineClusterOptions } from './offline-clusterer.js';
import { OnlineClusterer, type OnlineClusterOptions } from './online-clusterer.js';
import { SpeakerFrameExtractor, type SpeakerFrame } from './speech-frames.js';

export type { DiarizationEngine, DiarizationStream, SpeakerTurn } from './interface.js';

export interface BicDiarizerOptions {
  offline?: OfflineClusterOptions;
  online?: OnlineClusterOptions;
  /** A loaded VAD; by default Silero (energy fallback) is loaded on first use. */
  vad?: Vad;
  log?: VadLog;
}

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
    const extractor = new SpeakerFrameExtractor((await this.loadVad('batch')).createStream());
    const frames: SpeakerFrame[] = [];
    for await (const chunk of pcm) {
      options.signal?.throwIfAborted();
      for (const f of await extractor.push(chunk)) frames.push(f);
    }
    for (const f of await extractor.flush()) frames.push(f);
    options.signal?.throwIfAborted();
    return clusterOffline(frames, this.options.offline);
  }

  createStream(): DiarizationStream {
    const extractor = this.loadVad('live').then((vad) => new SpeakerFrameExtractor(vad.createStream()));
    const clusterer = new OnlineClusterer(this.options.online);
    return {
      async push(pcm) {
        clusterer.add(await (await extractor).push(pcm));
      },
      async flush() {
        clusterer.add(await (await extractor).flush());
        clusterer.flush();
      },
      speakerAt: (startMs, endMs) => clusterer.speakerAt(startMs, endMs),
    };
  }
}
