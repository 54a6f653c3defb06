// Real-time transcription of a process: the live core's service (admission, sessions, metering; session.ts), its
// observations in the metrics, and the /transcribe-websocket surface (the Soniox renderer's socket adapter).
import type { DiarizationEngine, MatchThresholds } from '../../engines/diarization/interface.js';
import type { LanguageIdentifier } from '../../engines/language-id/engine.js';
import type { WsHandler } from '../../http/websocket.js';
import type { ProcessParts } from '../../process-parts.js';
import type { RealtimeDeps } from './session-host.js';
import { realtimeSessionOptions } from './options.js';
import { realtimeWsHandler } from './routes.js';
import { RealtimeService } from './service.js';

export function realtimeModule(
  parts: ProcessParts,
  deps: Omit<RealtimeDeps, 'log' | 'observe'> & {
    diarizer: DiarizationEngine;
    speakerMatch: MatchThresholds;
    languageId?: () => LanguageIdentifier | undefined;
  },
): { realtime: RealtimeService; handler: WsHandler } {
  const { metrics } = parts;
  const { diarizer, speakerMatch, languageId, ...rest } = deps;
  const realtime = new RealtimeService(
    {
      ...rest,
      log: parts.log,
      observe: {
        finalTokenLag: (seconds) => metrics.finalTokenLag.observe(seconds),
        secondPass: ({ decoded, skipped, late, failed }) => {
          for (const [outcome, n] of Object.entries({ decoded, skipped, late, failed })) if (n) metrics.secondPass.inc({ outcome }, n);
        },
      },
    },
    realtimeSessionOptions(parts.settings, { diarizer, speakerMatch, languageId }),
  );
  metrics.gauge('parlance_realtime_sessions', 'Real-time transcription sessions open on this node.', () => realtime.openSessions);
  return { realtime, handler: realtimeWsHandler(realtime) };
}
