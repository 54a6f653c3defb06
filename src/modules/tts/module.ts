// Text-to-speech of a process: the service behind POST /tts, the TTS WebSocket, OpenAI speech and Wyoming (its
// synthesizer processes gated per node), its gauges, the routes and the /tts-websocket surface.
import { availableParallelism } from 'node:os';
import type { EngineCatalog } from '../../engines/catalog.js';
import { synthesisGate } from '../../engines/tts/process.js';
import { mount, type Mount } from '../../http/app-types.js';
import type { ProcessParts } from '../../process-parts.js';
import type { AuthService } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import type { ConcurrencyLimits } from '../limits/concurrency.js';
import type { RateLimits } from '../limits/rate-limits.js';
import type { UsageMeter } from '../usage/service.js';
import { ttsRoutes } from './routes.js';
import { TtsService } from './service.js';
import { type TtsWebSocketSurface, ttsWebSocketSurface } from './ws.js';

export interface TtsDeps {
  engines: EngineCatalog;
  auth: AuthService;
  rateLimits: RateLimits;
  billing: BillingGuard;
  concurrency: ConcurrencyLimits;
  meter: UsageMeter;
  errorReferenceUrl(): string;
}

export function ttsModule(parts: ProcessParts, deps: TtsDeps): { tts: TtsService; routes: Mount; sockets: TtsWebSocketSurface } {
  const { settings, metrics } = parts;
  const processes = settings.ttsProcesses || availableParallelism();
  synthesisGate.resize(processes);
  const tts = new TtsService(deps.engines.tts, deps.auth, deps.rateLimits, deps.billing, parts.cursors, deps.concurrency, {
    maxTextChars: settings.ttsMaxTextChars,
    maxAudioSeconds: settings.ttsMaxAudioSeconds,
    meter: deps.meter,
    synthesis: { gate: synthesisGate, maxActive: settings.ttsMaxActive || 8 * processes, onRefused: () => metrics.refusals.inc({ kind: 'tts' }) },
  });
  metrics.gauge('parlance_tts_active', 'TTS HTTP requests and WebSocket streams in progress on this node.', () => tts.activeCount);
  metrics.gauge('parlance_tts_synthesizers_running', 'Synthesizer processes running now.', () => synthesisGate.running);
  metrics.gauge('parlance_tts_synthesis_waiting', 'Synthesis segments waiting for a synthesizer process.', () => synthesisGate.waiting);
  return {
    tts,
    routes: mount(ttsRoutes, { tts, errorReferenceUrl: deps.errorReferenceUrl }),
    sockets: ttsWebSocketSurface({ tts, log: parts.log, settings, errorReferenceUrl: deps.errorReferenceUrl }),
  };
}
