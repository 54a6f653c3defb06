// Synthesized speech streamed as an HTTP response body, for POST /tts and OpenAI's POST /v1/audio/speech: a
// concurrency slot, the TTS pipeline, failures before the first audio left to the route's error handler, the audio
// written as it comes (with backpressure), a temporary key's session deadline, and usage metered before the
// response completes (work that cannot be billed is a cut response); a stopped or failed response is metered for
// the audio made so far.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionDeadline } from '../auth/service.js';
import type { TtsConfig } from './request-config.js';
import type { TtsService } from './service.js';

export interface SpeechResponse {
  contentType: string;
  /** What one audio chunk becomes in the body (default: its bytes). */
  frame?: (audio: Buffer) => string | Buffer;
  /** Written after the audio once it is metered, given the seconds made. */
  trailer?: (seconds: number) => string;
  /** Names the surface in log lines ("tts", "speech"). */
  label: string;
}

export async function streamSpeech(
  tts: TtsService,
  req: FastifyRequest,
  reply: FastifyReply,
  cfg: TtsConfig,
  text: string,
  startedAt: Date,
  opts: SpeechResponse,
): Promise<void> {
  const release = await tts.acquire(req.auth);
  const res = reply.raw;
  // The client may have gone while the slot was being taken: its 'close' has fired already.
  if (res.destroyed) return release();
  const ac = new AbortController();
  const out = tts.synthesize(cfg, text, ac.signal);
  const onClose = () => ac.abort();
  res.once('close', onClose);
  res.once('close', release);
  let metered: Promise<void> | undefined;
  const meter = () => (metered ??= tts.recordUsage(req.auth, cfg, { requestId: req.id, startedAt, characters: text.length, seconds: out.seconds() }));
  const unmetered = (err: unknown) => req.log.error({ err }, `${opts.label} usage not recorded`);
  // The first chunk decides between an error body and a 200: failures before any audio are reported.
  let first: IteratorResult<{ audio: Buffer }>;
  try {
    first = await out.chunks.next();
  } catch (err) {
    res.off('close', onClose);
    release();
    // The client left before the first audio (a timeout on its side): nobody to answer, nothing failed here.
    if (res.destroyed && ac.signal.aborted) {
      void meter().catch(unmetered);
      req.log.debug(`${opts.label} client left before the first audio`);
      return void reply.hijack();
    }
    throw err;
  }
  reply.hijack();
  res.writeHead(200, { 'content-type': opts.contentType, 'x-request-id': req.id, 'cache-control': 'no-store' });
  const put = async (audio: Buffer) => {
    if (!res.write(opts.frame ? opts.frame(audio) : audio)) await drained(res);
  };
  const deadline = req.auth.temporary ? sessionDeadline(req.auth, startedAt) : null;
  const timer = deadline
    ? setTimeout(
        () => {
          // temp_api_key_session_expired mid-stream: the connection is dropped.
          ac.abort();
          res.destroy();
        },
        Math.max(0, deadline.getTime() - Date.now()),
      )
    : undefined;
  try {
    if (!first.done) {
      await put(first.value.audio);
      for await (const chunk of out.chunks) {
        if (res.destroyed) break;
        await put(chunk.audio);
      }
    }
    if (!res.destroyed) {
      await meter().catch((err: unknown) => {
        throw new UsageNotRecorded(err);
      });
      if (opts.trailer) res.write(opts.trailer(out.seconds()));
      // The 2-minute cap ends the response cleanly with the truncated audio.
      res.end();
    }
  } catch (err) {
    if (err instanceof UsageNotRecorded) req.log.error({ err: err.cause }, `${opts.label} usage not recorded: the response is failed`);
    else if (!res.destroyed) req.log.warn({ err }, `${opts.label} stream failed after audio began`);
    res.destroy();
  } finally {
    if (timer) clearTimeout(timer);
    res.off('close', onClose);
    ac.abort();
    release();
    if (!metered) void meter().catch(unmetered);
  }
}

class UsageNotRecorded extends Error {
  constructor(cause: unknown) {
    super('usage not recorded', { cause });
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
