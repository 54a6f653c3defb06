// The client of the audio worker thread (audio-worker.ts): voice profiles, silence bounds, raw output encoders and
// voice activity detection computed off the event loop. Threads by lane (lib/worker-lane.ts), each started on first use:
// voice profiles (seconds of work for a long clip), speech output (milliseconds per segment), and voice activity
// detection of live sessions apart from that of files, so that no batch work ever holds up audio a listener is
// waiting for. Running from TypeScript sources (tests importing modules directly) there is no
// compiled worker: the work is then done inline.
import { fileURLToPath } from 'node:url';
import { BATCH_NICE, INTERACTIVE_NICE } from '../lib/priority.js';
import { WorkerLane } from '../lib/worker-lane.js';
import type { AudioRequest, AudioResult } from './audio-worker-messages.js';
import { pcmToFloat, type VoiceProfile, voiceProfile } from './features.js';
import { RawOutputEncoder, type RawOutputOptions, silenceBounds } from './raw-output.js';
import { defaultLog, type LoadVadOptions, loadVad, type Vad, type VadBackend, type VadFrame, type VadStream, type VadStreamOptions } from './vad.js';

const WORKER_FILE = fileURLToPath(new URL('./audio-worker.js', import.meta.url));

type Lane = 'profile' | 'output' | 'vad-live' | 'vad-batch';
type Request = AudioRequest extends infer R ? (R extends AudioRequest ? Omit<R, 'id'> : never) : never;

type AudioThread = WorkerLane<Request, AudioResult>;

// Priorities (lib/priority.ts): live sessions' detection at the server's own; speech a client waits for above batch
// work (voice preparation, files).
const threads: Record<Lane, AudioThread> = {
  profile: new WorkerLane(WORKER_FILE, { nice: BATCH_NICE }),
  output: new WorkerLane(WORKER_FILE, { nice: INTERACTIVE_NICE }),
  'vad-live': new WorkerLane(WORKER_FILE),
  'vad-batch': new WorkerLane(WORKER_FILE, { nice: BATCH_NICE }),
};

const asBuffer = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export async function voiceProfileOffThread(pcm16k: Buffer): Promise<VoiceProfile> {
  const t = threads.profile;
  if (!t.available()) return voiceProfile(pcmToFloat(pcm16k));
  const r = (await t.call({ op: 'profile', pcm: pcm16k })) as { profile: VoiceProfile };
  return r.profile;
}

/** `pcm` (mono s16le) without its leading and trailing silence, keeping a short pad (reduce_silence). */
export async function trimSilenceOffThread(pcm: Buffer, rate: number): Promise<Buffer> {
  const [start, end] = await silenceBoundsOffThread(pcm, rate);
  return pcm.subarray(start, end);
}

/** The byte range trimSilenceOffThread keeps of `pcm`. */
export async function silenceBoundsOffThread(pcm: Buffer, rate: number): Promise<[number, number]> {
  const t = threads.output;
  return t.available()
    ? ((await t.call({ op: 'silence-bounds', pcm: new Uint8Array(pcm), rate })) as { bounds: [number, number] }).bounds
    : silenceBounds(pcm, rate);
}

export interface OffThreadEncoder {
  push(pcm: Buffer): Promise<Buffer>;
  /** The last bytes; also frees the encoder (call it on every path, an aborted stream included). */
  end(): Promise<Buffer>;
}

let nextStream = 0;

/** A raw output encoder (RawOutputEncoder) living on the output thread: per-sample work off the event loop. */
export async function openRawEncoder(options: RawOutputOptions): Promise<OffThreadEncoder> {
  const t = threads.output;
  let ended = false;
  if (!t.available()) {
    const enc = new RawOutputEncoder(options);
    return {
      push: async (pcm) => enc.push(pcm),
      end: async () => {
        if (ended) return Buffer.alloc(0);
        ended = true;
        return enc.end();
      },
    };
  }
  const stream = nextStream++;
  await t.call({ op: 'encoder-open', stream, options });
  const bytes = async (req: Request) => asBuffer(((await t.call(req)) as { bytes: Uint8Array }).bytes);
  return {
    push: (pcm) => bytes({ op: 'encoder-push', stream, pcm: new Uint8Array(pcm) }),
    end: () => {
      if (ended) return Promise.resolve(Buffer.alloc(0));
      ended = true;
      return bytes({ op: 'encoder-end', stream });
    },
  };
}

let nextVadStream = 0;

/** Ends worker-side streams their owners dropped without a flush (a cut session). */
const vadStreamsGone = new FinalizationRegistry<{ thread: AudioThread; stream: number }>(({ thread, stream }) => {
  void thread.call({ op: 'vad-close', stream }).catch(() => undefined);
});

class OffThreadVadStream implements VadStream {
  samples = 0;
  private readonly stream = nextVadStream++;
  private readonly opened: Promise<AudioResult>;

  constructor(
    private readonly thread: AudioThread,
    readonly backend: VadBackend,
    modelKey: string,
    options: VadStreamOptions,
  ) {
    this.opened = thread.call({ op: 'vad-open', stream: this.stream, modelKey, options });
    this.opened.catch(() => undefined);
    vadStreamsGone.register(this, { thread, stream: this.stream }, this);
  }

  async push(pcm: Uint8Array): Promise<VadFrame[]> {
    this.samples += pcm.length >> 1;
    await this.opened;
    // A copy of exactly these bytes: a view would send its whole underlying buffer.
    return ((await this.thread.call({ op: 'vad-push', stream: this.stream, pcm: new Uint8Array(pcm) })) as { frames: VadFrame[] }).frames;
  }

  async flush(): Promise<VadFrame[]> {
    vadStreamsGone.unregister(this);
    await this.opened;
    return ((await this.thread.call({ op: 'vad-flush', stream: this.stream })) as { frames: VadFrame[] }).frames;
  }
}

/**
 * loadVad with the detector on a worker thread of its lane ('live' sessions or 'batch' files): Silero's ONNX
 * session runs synchronously on its thread, which must not be the event loop. Inline without a compiled worker.
 */
export async function loadVadOffThread(options: LoadVadOptions & { lane: 'live' | 'batch' }): Promise<Vad> {
  const thread = threads[options.lane === 'live' ? 'vad-live' : 'vad-batch'];
  if (!thread.available()) return loadVad(options);
  const { vad } = (await thread.call({ op: 'vad-load', backend: options.backend, modelPath: options.modelPath })) as Extract<AudioResult, { vad: unknown }>;
  if (vad.warning) (options.log ?? defaultLog)('warn', vad.warning.msg, vad.warning.detail);
  return {
    backend: vad.backend,
    fallbackReason: vad.fallbackReason,
    createStream: (streamOptions: VadStreamOptions = {}) => new OffThreadVadStream(thread, vad.backend, vad.modelKey, streamOptions),
  };
}
