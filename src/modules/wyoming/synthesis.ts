// The synthesis of a Wyoming connection (server.ts): `synthesize` spoken whole, and a streamed synthesis
// (synthesize-start, synthesize-chunk*, synthesize-stop) spoken a sentence at a time as its text completes. Either way
// the audio goes out as audio-start, audio-chunk*, audio-stop; a streamed one's block per sentence, which no other
// event's answer may enter (`block`).
import type { SpeechSink } from '../tts/speak.js';
import type { WyomingService, WyomingTextStream } from './service.js';
import { WyomingRequestError } from './transcription.js';

/** Samples per audio-chunk sent (as the reference TTS servers do: 1024). */
const SAMPLES_PER_CHUNK = 1024;

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

/** Sends one event; resolves once it is written. */
type Send = (type: string, data?: Record<string, unknown>, payload?: Buffer) => Promise<void>;
/** The `error` event's data for what a request threw. */
type ErrorData = (err: unknown, eventType: string) => { text: string; code: string };

const voiceOf = (d: Record<string, unknown>): Record<string, unknown> | undefined =>
  d.voice !== null && typeof d.voice === 'object' && !Array.isArray(d.voice) ? (d.voice as Record<string, unknown>) : undefined;

export class WyomingSynthesis {
  private tts: Streaming | undefined;
  private sending: Promise<void> = Promise.resolve();

  /** `signal`: the connection's, aborted when it goes. */
  constructor(
    private readonly service: WyomingService,
    private readonly send: Send,
    private readonly signal: AbortSignal,
    private readonly errorData: ErrorData,
  ) {}

  /** The audio block (one sentence of a streamed synthesis) being sent: no other event's answer goes inside it. */
  get block(): Promise<void> {
    return this.sending;
  }

  /** synthesize: the whole text, spoken at once. */
  async synthesize(d: Record<string, unknown>): Promise<void> {
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
      this.signal,
      d.text_format,
    );
  }

  /**
   * synthesize-start: the voice and budget are checked and one synthesis starts, fed by the chunks to come. A refused
   * start still opens the stream, failed, so that the client's chunks are dropped and its synthesize-stop answered.
   */
  async startStream(d: Record<string, unknown>): Promise<void> {
    if (this.tts && !this.tts.failed)
      throw new WyomingRequestError(
        'invalid_stream_state',
        'A streamed synthesis is already under way on this connection: send synthesize-stop before the next synthesize-start.',
      );
    this.dropStream();
    const s: Streaming = { stream: undefined, ac: new AbortController(), done: Promise.resolve(), failed: true };
    this.tts = s;
    const stream = await this.service.openStream(voiceOf(d), d.text_format);
    if (this.tts !== s || this.signal.aborted) return;
    s.stream = stream;
    s.failed = false;
    s.done = stream.speak(this.sentenceSink(s, stream), s.ac.signal).catch((err: unknown) => this.failStream(s, err));
  }

  /** synthesize-chunk: its text goes to the synthesis, which speaks each sentence once its end is seen. */
  async streamChunk(d: Record<string, unknown>): Promise<void> {
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
  async stopStream(): Promise<void> {
    const s = this.tts;
    if (!s) throw new WyomingRequestError('invalid_stream_state', 'synthesize-stop outside a streamed synthesis: send synthesize-start first.');
    s.stream?.text.end();
    await s.done;
    await this.block;
    if (this.tts === s) this.tts = undefined;
    if (!this.signal.aborted) await this.send('synthesize-stopped');
  }

  /** The stream failed: its synthesis is stopped (its slot freed, what was made metered), and the `error` event sent once. */
  private async failStream(s: Streaming, err: unknown): Promise<void> {
    if (s.failed) return;
    s.failed = true;
    s.ac.abort();
    s.stream?.text.end();
    // After the sentence being sent, cut short.
    await this.block;
    if (!this.signal.aborted) await this.send('error', this.errorData(err, 'synthesize-stream'));
  }

  /** Stop the connection's stream without a word (the connection went, or a failed stream is replaced). */
  dropStream(): void {
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
      audio: (chunk) => (this.sending = sentence(chunk.audio)),
      end: (result) => {
        if (result.truncated)
          throw new WyomingRequestError(
            'max_audio_duration_reached',
            `The audio reached this server's limit of ${stream.maxAudioSeconds} s per request; the rest of the text was not spoken.`,
          );
      },
    };
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
}
