// Synthesized speech streamed as an HTTP response body, for POST /tts and OpenAI's POST /v1/audio/speech: the
// synthesis is TtsService.speak's (slot, caps, metering); here, the response. A failure before the first audio is
// left to the route's error handler; then a 200 and the audio written as it comes (with backpressure); a failure
// after that (the temporary key's session deadline, usage that could not be recorded) cuts the response.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../wire/api-error.js';
import type { TtsConfig } from './request-config.js';
import type { TtsService } from './service.js';
import { type SpeechResult, type SpeechSink, UsageNotRecorded } from './speak.js';
import type { SpeechText } from './speech-text.js';

export interface SpeechResponse {
  contentType: string;
  /** What one audio chunk becomes in the body (default: its bytes). */
  frame?: (audio: Buffer) => string | Buffer;
  /** Written after the audio once it is metered. */
  trailer?: (result: SpeechResult) => string;
  /** Names the surface in log lines ("tts", "speech"). */
  label: string;
}

export async function streamSpeech(
  tts: TtsService,
  req: FastifyRequest,
  reply: FastifyReply,
  cfg: TtsConfig,
  text: SpeechText,
  startedAt: Date,
  opts: SpeechResponse,
): Promise<void> {
  const res = reply.raw;
  const ac = new AbortController();
  const onClose = () => ac.abort();
  // The client may have gone already (while the request was resolved): its 'close' has fired.
  if (res.destroyed) ac.abort();
  else res.once('close', onClose);
  let started = false;
  const sink: SpeechSink = {
    start: () => {
      started = true;
      reply.hijack();
      // The headers hooks set on the reply (request id, rate limits, CORS) go out with the hijacked response.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value);
      res.writeHead(200, { 'content-type': opts.contentType, 'x-request-id': req.id, 'cache-control': 'no-store' });
    },
    audio: async ({ audio }) => {
      if (res.destroyed) return;
      if (!res.write(opts.frame ? opts.frame(audio) : audio)) await drained(res);
    },
    end: (result) => {
      if (opts.trailer) res.write(opts.trailer(result));
      // The audio cap ends the response cleanly with the truncated audio.
      res.end();
    },
  };
  try {
    await tts.speak({ cfg, text, requestId: req.id, startedAt, log: req.log, label: opts.label }, req.auth, sink, ac.signal);
  } catch (err) {
    if (!started) {
      // The client left before the first audio (a timeout on its side): nobody to answer, nothing failed here.
      if (ac.signal.aborted) {
        req.log.debug(`${opts.label} client left before the first audio`);
        return void reply.hijack();
      }
      throw err;
    }
    if (err instanceof UsageNotRecorded) req.log.error({ err: err.cause }, `${opts.label} usage not recorded: the response is failed`);
    // A temporary key's session deadline mid-stream drops the connection.
    else if (!res.destroyed && !(err instanceof ApiError && err.type === 'temp_api_key_session_expired'))
      req.log.warn({ err }, `${opts.label} stream failed after audio began`);
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}

/** Resolves once `res` can take more, or is gone. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
