// The streaming recognizer of one real-time session: the model's recognizer (loaded once and shared by every session
// of the model), and one of its streams with the session's context and timing.
import { recognitionContext } from '../../engines/stt/context.js';
import { EngineBusyError, type Recognizer, type StreamingSession } from '../../engines/stt/interface.js';
import { ApiError } from '../../wire/api-error.js';
import type { ResolvedCatalogModel } from '../models/catalog.js';
import type { RealtimeConfig } from './config.js';
import type { RealtimeOptions } from './options.js';

export async function openRecognizerStream(
  resolved: ResolvedCatalogModel,
  /** The session's language (its recognizer's calls are in it). */
  language: string,
  config: RealtimeConfig,
  opts: RealtimeOptions,
  signal: AbortSignal,
): Promise<StreamingSession> {
  // No abort signal here: the load is shared with every other session of the model. A model that cannot load is
  // model_not_available.
  const recognizer: Recognizer = await resolved.open({ language });
  // All recognizers busy: wait at most the audio timeout for one, then refuse rather than queue audio forever.
  // Loading one (a cold start) is the server's delay and does not count.
  return recognizer
    .stream({
      context: recognitionContext(config.context),
      endpointSilenceMs: Math.min(opts.endpointSilenceMs, config.maxEndpointDelayMs),
      partialIntervalMs: opts.partialIntervalMs,
      maxNonFinalMs: config.maxNonFinalTokensDurationMs,
      signal,
      busyWaitMs: opts.audioTimeoutMs,
    })
    .catch((err: unknown) => {
      if (err instanceof EngineBusyError)
        throw new ApiError('limit_exceeded', 'Concurrent real-time transcription streams limit reached for this server: every recognizer is busy.');
      throw err;
    });
}
