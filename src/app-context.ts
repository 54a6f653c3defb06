// Everything a process's surfaces reach (HTTP routes, sockets, Wyoming): settings, storage, services. Built once per
// process by createContext (create-context.ts); transport-free, so neither http/ nor modules/ own it.
import type { Logger } from 'pino';
import type { Mount } from './http/app-types.js';
import type { Metrics } from './http/metrics.js';
import type { Settings } from './config/settings.js';
import type { AuthService } from './modules/auth/service.js';
import type { BillingGuard } from './modules/billing/guard.js';
import type { ModelCatalog } from './modules/models/catalog.js';
import type { RealtimeService } from './modules/realtime/service.js';
import type { TtsService } from './modules/tts/service.js';
import type { RateLimits } from './modules/limits/rate-limits.js';
import type { TenancyService } from './modules/tenancy/service.js';
import type { Db } from './storage/database.js';
import type { WsRoutes } from './http/websocket.js';

/** What the process's surfaces reach beyond their own modules' routes. Built once per process. */
export interface AppContext {
  settings: Settings;
  /** The process logger (JSON on stderr); Fastify's request loggers are its children. */
  log: Logger;
  db: Db;
  auth: AuthService;
  tenancy: TenancyService;
  models: ModelCatalog;
  tts: TtsService;
  /** The live transcription core (Wyoming's utterances are its sessions). */
  realtime: RealtimeService;
  rateLimits: RateLimits;
  /** The balance and budget check billable work runs before it starts. */
  billing: BillingGuard;
  /** Prometheus metrics of this node (GET /metrics). */
  metrics: Metrics;
  /** Base address of the error reference (more_info = this + '#' + type). */
  errorReferenceUrl(): string;
  /** Every module's routes, bound to their services (empty on a worker node). */
  routes: Mount[];
  /** WebSocket handlers by path (the real-time STT and TTS interfaces register here). */
  wsRoutes: WsRoutes;
}
