// Speech synthesis with TTS models users bring (sherpa-onnx: VITS/Piper, Matcha, Kokoro, Kitten). Before a model is offered
// it is loaded and made to speak one sentence in a child process (check-model.ts): sherpa-onnx ends its process on a
// model it cannot use, and that must not be the server; the check also reads the model's sample rate and speaker
// count. Text is cut into sentences by the engines' shared segmenter (text.ts), and each sentence is synthesized on
// one of the model's worker threads (each holding the model, started as concurrent requests need them) below the
// server's priority, passing the node's synthesis gate like every synthesizer process. s16le out at the model's rate.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { INTERACTIVE_NICE } from '../../../lib/priority.js';
import { runChild } from '../../../lib/spawner/spawn-child.js';
import { WorkGate } from '../../../lib/work-gate.js';
import { WorkerLane } from '../../../lib/worker-lane.js';
import { MANIFEST_FILE, type InstalledModel } from '../../model-dir/manifest.js';
import { sherpa } from '../../stt/sherpa/load-sherpa.js';
import type { EngineVoice, SynthesisChunk, SynthesisOptions, TtsEngine, TtsLanguage } from '../interface.js';
import { synthesisGate, SynthesisError } from '../process.js';
import { segments } from '../text.js';
import { type OfflineTtsConfig, offlineTtsConfig } from './config.js';
import { voiceGender } from './voice-gender.js';
import { floatToPcm16, type SentenceAudio, type SentenceRequest } from './generate.js';
import type { TtsWorkerReply, TtsWorkerRequest } from './tts-worker-messages.js';

export const SHERPA_TTS_ENGINE = 'sherpa-onnx';
const WORKER_FILE = fileURLToPath(new URL('./tts-worker.js', import.meta.url));
const CHECK_FILE = fileURLToPath(new URL('./check-model.js', import.meta.url));
const CHECK_TIMEOUT_MS = 120_000;
/** The sentence a model must speak before it is offered, by its first language (default English). */
const CHECK_TEXT: Readonly<Record<string, string>> = { zh: '你好。' };

const displayNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });

/** A TTS model sherpa-onnx cannot use (or whose manifest does not fit it), with the reason in words. */
export class SherpaTtsModelError extends Error {
  constructor(
    readonly model: InstalledModel,
    reason: string,
    readonly fix: string,
  ) {
    super(`TTS model ${model.id} (${model.dir}) ${reason} (${fix})`);
    this.name = 'SherpaTtsModelError';
  }
}

export interface SherpaTtsOptions {
  /** Synthesizers per model (worker threads each holding the model, started on demand); default: half the cores, at least 1. */
  concurrency?: number;
  /** The node-wide gate every sentence passes; default: the synthesizer processes' (PARLANCE_TTS_PROCESSES). */
  gate?: WorkGate;
}

/** A voice of the model: a public name and the speaker id it speaks with. */
export interface Speaker {
  name: string;
  sid: number;
}

/** What the model check read from the model. */
export interface SherpaTtsInfo {
  sampleRate: number;
  numSpeakers: number;
}

type Request = TtsWorkerRequest extends infer R ? (R extends TtsWorkerRequest ? Omit<R, 'id'> : never) : never;

interface Synthesizer {
  generate(req: SentenceRequest): Promise<SentenceAudio>;
  stop(): Promise<void>;
}

/** The default voice's name: the model id without its version (`piper-en-amy-v1` → `piper-en-amy`). */
export function defaultVoiceName(model: Pick<InstalledModel, 'id'>): string {
  return model.id.replace(/-v[0-9]+$/, '');
}

export class SherpaTtsEngine implements TtsEngine {
  readonly name = SHERPA_TTS_ENGINE;
  readonly supportsSpeed = true;
  readonly supportsTimestamps = true;
  readonly languages: readonly TtsLanguage[];
  /** The manifest's `voices` (name → speaker id), or one voice named after the model speaking with speaker 0. */
  readonly speakers: readonly Speaker[];
  private readonly config: OfflineTtsConfig;
  private info: SherpaTtsInfo | undefined;
  private checking: Promise<SherpaTtsInfo> | undefined;
  /** The model's synthesizers: `concurrency` at most, each used by one sentence at a time. */
  private readonly gate: WorkGate;
  private readonly free: Synthesizer[] = [];
  private readonly started = new Set<Synthesizer>();
  private closed = false;
  /** When a sentence last started or ended (ms since the epoch; 0: never). */
  private lastUsedAt = 0;

  constructor(
    readonly model: InstalledModel,
    private readonly options: SherpaTtsOptions = {},
  ) {
    this.config = offlineTtsConfig(model);
    this.languages = model.languages.map((code) => ({ code, name: displayNames.of(code) ?? code }));
    this.speakers = model.voices ? Object.entries(model.voices).map(([name, sid]) => ({ name, sid })) : [{ name: defaultVoiceName(model), sid: 0 }];
    this.gate = new WorkGate(options.concurrency ?? Math.max(1, Math.floor(availableParallelism() / 2)));
  }

  /** The model's output rate (known once init() succeeded). */
  get sampleRate(): number {
    return this.info?.sampleRate ?? 0;
  }

  get numSpeakers(): number {
    return this.info?.numSpeakers ?? 0;
  }

  /** One engine voice per speaker id used (its id is the speaker id). */
  get voices(): EngineVoice[] {
    const sids = [...new Set(this.speakers.map((s) => s.sid))];
    // A speaker id's gender from the first name it has.
    return sids.map((sid) => ({ id: String(sid), gender: voiceGender(this.speakers.find((s) => s.sid === sid)!.name), sampleRate: this.sampleRate }));
  }

  /**
   * Check the model (in a child process when compiled) and read its sample rate and speakers; rejects with a
   * SherpaTtsModelError saying why a model cannot be used. Once it succeeded the engine synthesizes.
   */
  init(): Promise<this> {
    this.checking ??= this.check().then(
      (info) => (this.info = info),
      (err: unknown) => {
        this.checking = undefined; // tried again by the next call
        throw err;
      },
    );
    return this.checking.then(() => this);
  }

  available(): Promise<boolean> {
    return Promise.resolve(this.info !== undefined);
  }

  async *synthesize(text: AsyncIterable<string> | string, voice: string, _language: string, opts: SynthesisOptions = {}): AsyncGenerator<SynthesisChunk> {
    const { signal } = opts;
    signal?.throwIfAborted();
    if (!this.info) throw new SynthesisError(`TTS model ${this.model.id} has not been checked (init)`);
    const sid = Number(voice);
    if (!/^[0-9]+$/.test(voice) || (this.info.numSpeakers > 0 && sid >= this.info.numSpeakers))
      throw new SynthesisError(`TTS model ${this.model.id} has no speaker "${voice}"`);
    const speed = opts.speed ?? 1;
    for await (const seg of segments(text)) {
      signal?.throwIfAborted();
      const audio = await this.sentence({ text: seg, sid, speed }, signal);
      const pcm = Buffer.from(audio.samples.buffer, audio.samples.byteOffset, audio.samples.byteLength);
      yield { pcm, sampleRate: audio.sampleRate, text: seg };
    }
  }

  /**
   * One sentence on a free synthesizer of the model, once the node's synthesis gate lets it run. An abort stops the
   * wait at once; a sentence already being synthesized finishes on its thread (which stays busy until then), but the
   * caller is not kept waiting for it.
   */
  private sentence(req: SentenceRequest, signal: AbortSignal | undefined): Promise<SentenceAudio> {
    const nodeGate = this.options.gate ?? synthesisGate;
    this.lastUsedAt = Date.now();
    const work = this.gate.run(() => nodeGate.run(() => this.onSynthesizer(req), signal), signal).finally(() => (this.lastUsedAt = Date.now()));
    if (!signal) return work;
    work.catch(() => undefined);
    return new Promise<SentenceAudio>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async onSynthesizer(req: SentenceRequest): Promise<SentenceAudio> {
    if (this.closed) throw new SynthesisError(`TTS model ${this.model.id} is closed`);
    const s = this.free.pop() ?? this.startSynthesizer();
    try {
      const audio = await s.generate(req);
      this.free.push(s);
      return audio;
    } catch (err) {
      // A failed or dead thread is replaced by the next sentence that needs one.
      this.started.delete(s);
      void s.stop().catch(() => undefined);
      throw err;
    }
  }

  private startSynthesizer(): Synthesizer {
    let s: Synthesizer;
    if (!existsSync(WORKER_FILE)) {
      // Running from sources (tests importing modules): sherpa's async generation on Node's thread pool.
      const loaded = sherpa().OfflineTts.createAsync(this.config);
      loaded.catch(() => undefined);
      s = {
        async generate(req) {
          const audio = await (await loaded).generateAsync({ text: req.text, sid: req.sid, speed: req.speed });
          return { samples: floatToPcm16(audio.samples), sampleRate: audio.sampleRate };
        },
        stop: () => Promise.resolve(),
      };
    } else {
      const lane = new WorkerLane<Request, TtsWorkerReply>(WORKER_FILE, { nice: INTERACTIVE_NICE });
      const loaded = lane.call({ op: 'load', config: this.config });
      loaded.catch(() => undefined);
      s = {
        async generate(req) {
          await loaded;
          return ((await lane.call({ op: 'generate', ...req })) as Extract<TtsWorkerReply, { audio: unknown }>).audio;
        },
        stop: () => lane.stop(),
      };
    }
    this.started.add(s);
    return s;
  }

  private async check(): Promise<SherpaTtsInfo> {
    const info = existsSync(CHECK_FILE) ? await this.checkInChild() : await this.checkInProcess();
    const { numSpeakers } = info;
    for (const s of this.speakers) {
      if (numSpeakers > 0 && s.sid >= numSpeakers) {
        throw new SherpaTtsModelError(
          this.model,
          `names speaker ${s.sid} for voice "${s.name}", but the model has ${numSpeakers === 1 ? 'one speaker (0)' : `${numSpeakers} speakers (0 to ${numSpeakers - 1})`}`,
          `correct "voices" in ${MANIFEST_FILE}`,
        );
      }
    }
    return info;
  }

  /** Sources only (tests): no compiled checker, so the model is loaded here. */
  private async checkInProcess(): Promise<SherpaTtsInfo> {
    const tts = await sherpa().OfflineTts.createAsync(this.config);
    return { sampleRate: tts.sampleRate, numSpeakers: tts.numSpeakers };
  }

  private async checkInChild(): Promise<SherpaTtsInfo> {
    const text = CHECK_TEXT[this.model.languages[0]!] ?? 'Hello.';
    const r = await runChild(process.execPath, [CHECK_FILE, JSON.stringify(this.config), text], { timeoutMs: CHECK_TIMEOUT_MS, nice: INTERACTIVE_NICE });
    const line = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .at(-1);
    if (r.code === 0 && line) {
      const info = JSON.parse(line) as SherpaTtsInfo;
      if (info.sampleRate > 0) return { sampleRate: info.sampleRate, numSpeakers: info.numSpeakers };
    }
    const fix = `check that its files are a ${this.model.type} model as ${MANIFEST_FILE} says`;
    if (r.signal === 'SIGKILL' && !r.stderr.trim())
      throw new SherpaTtsModelError(this.model, `did not load and speak within ${CHECK_TIMEOUT_MS / 1000} s`, fix);
    // sherpa-onnx prints its reason on stderr: keep the last meaningful line, without source positions or addresses.
    const reason =
      r.stderr
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !/^at /.test(l))
        .at(-1)
        ?.replace(/^\S+\.(?:cc|h|cpp):\w+:\d+\s+/, '')
        .replace(/0x[0-9a-f]+/gi, '') ?? '';
    throw new SherpaTtsModelError(
      this.model,
      `could not be loaded by sherpa-onnx${r.signal ? ` (${r.signal})` : ` (exit ${r.code})`}${reason ? `: ${reason.slice(0, 300)}` : ''}`,
      fix,
    );
  }

  /** Whether a synthesizer holds the model now (one is started by the first sentence that needs it). */
  get loaded(): boolean {
    return this.started.size > 0;
  }

  /** Sentences being synthesized or waiting for a synthesizer of the model. */
  get busy(): number {
    return this.gate.running + this.gate.waiting;
  }

  /** When a sentence last started or ended (ms since the epoch; 0: never). */
  get lastUsed(): number {
    return this.lastUsedAt;
  }

  /** Stop the synthesizers no sentence uses (the model's memory); the next sentence starts one again. */
  async unload(): Promise<boolean> {
    const idle = this.free.splice(0);
    for (const s of idle) this.started.delete(s);
    await Promise.all(idle.map((s) => s.stop().catch(() => undefined)));
    return idle.length > 0;
  }

  /** Stop the model's threads (sentences in progress fail). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.started];
    this.started.clear();
    this.free.length = 0;
    await Promise.all(all.map((s) => s.stop().catch(() => undefined)));
  }
}
