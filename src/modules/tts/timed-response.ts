// POST /tts/with-timestamps: the synthesis of POST /tts (TtsService.speak: slot, caps, metering) collected whole and
// answered as JSON, the audio in base64 with the time of every spoken word (src/engines/tts/word-timings.ts says how
// each engine times its words). Nothing is sent before the audio is complete and metered, so every failure, late ones
// included, is an error body; the audio cap ends the audio early, as on POST /tts.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AudioFormat } from '../../audio/speech-encoder.js';
import { ApiError } from '../../wire/api-error.js';
import type { TtsWordTimestamp } from '../../wire/tts-frames.js';
import type { TtsConfig } from './request-config.js';
import type { TtsService } from './service.js';
import { type SpeechSink, UsageNotRecorded } from './speak.js';
import type { SpeechText } from './speech-text.js';

export interface TimedSpeech {
  audio_base64: string;
  audio_format: AudioFormat;
  words: TtsWordTimestamp[];
}

/** A streamed WAV's placeholder sizes (0xFFFFFFFF) made exact, now that the whole file is known. */
export function exactWavSizes(wav: Buffer): Buffer {
  if (wav.length < 12 || wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE') return wav;
  wav.writeUInt32LE(wav.length - 8, 4);
  for (let off = 12; off + 8 <= wav.length;) {
    const id = wav.toString('ascii', off, off + 4);
    if (id === 'data') {
      wav.writeUInt32LE(wav.length - off - 8, off + 4);
      break;
    }
    off += 8 + wav.readUInt32LE(off + 4) + (wav.readUInt32LE(off + 4) & 1);
  }
  return wav;
}

export async function timedSpeech(
  tts: TtsService,
  req: FastifyRequest,
  reply: FastifyReply,
  cfg: TtsConfig,
  text: SpeechText,
  startedAt: Date,
): Promise<TimedSpeech | undefined> {
  const res = reply.raw;
  const ac = new AbortController();
  const onClose = () => ac.abort();
  if (res.destroyed) ac.abort();
  else res.once('close', onClose);
  const audio: Buffer[] = [];
  const words: TtsWordTimestamp[] = [];
  const sink: SpeechSink = {
    start: () => undefined,
    audio: (chunk) => {
      audio.push(chunk.audio);
      if (chunk.words) words.push(...chunk.words);
    },
    end: (result) => {
      if (result.words) words.push(...result.words);
    },
  };
  try {
    await tts.speak({ cfg, text, requestId: req.id, startedAt, log: req.log, label: 'tts', words: true }, req.auth, sink, ac.signal);
  } catch (err) {
    // The client left: nobody to answer.
    if (ac.signal.aborted) {
      req.log.debug('tts client left before the audio was complete');
      return void reply.hijack();
    }
    if (err instanceof UsageNotRecorded)
      throw new ApiError('internal_error', 'The usage of this request could not be recorded, so it failed; try again later.', { cause: err.cause });
    throw err;
  } finally {
    res.off('close', onClose);
  }
  const bytes = Buffer.concat(audio);
  return { audio_base64: (cfg.format === 'wav' ? exactWavSizes(bytes) : bytes).toString('base64'), audio_format: cfg.format, words };
}
