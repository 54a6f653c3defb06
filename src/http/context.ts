import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.js';
import type { CursorCodec } from '../lib/cursor.js';
import type { AuthService } from '../modules/auth/service.js';
import type { BillingGuard } from '../modules/billing/guard.js';
import type { FilesService } from '../modules/files/service.js';
import type { ModelCatalog } from '../modules/models/catalog.js';
import type { TranscriptionsService } from '../modules/transcriptions/service.js';
import type { TtsService } from '../modules/tts/service.js';
import type { RateLimits } from '../modules/limits/rate-limits.js';
import type { ConcurrencyLimits } from '../modules/limits/concurrency.js';
import type { StreamHistory } from '../modules/limits/stream-history.js';
import type { OrganizationService } from '../modules/organization/service.js';
import type { TenancyService } from '../modules/tenancy/service.js';
import type { VoicesService } from '../modules/voices/service.js';
import type { SpeakersService } from '../modules/speakers/service.js';
import type { UsageService } from '../modules/usage/service.js';
import type { Db } from '../storage/database.js';
import type { WsRoutes } from './websocket.js';

/** The Fastify application (app.ts builds it) as routes see it: TypeBox schemas type their requests. */
export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export type RouteModule = (app: App, opts: { ctx: AppContext }) => Promise<void>;

/** Everything a request can reach: settings, storage, services. Built once per process. */
export interface AppContext {
  settings: Settings;
  /** The process logger (JSON on stderr); Fastify's request loggers are its children. */
  log: Logger;
  db: Db;
  auth: AuthService;
  tenancy: TenancyService;
  files: FilesService;
  transcriptions: TranscriptionsService;
  models: ModelCatalog;
  tts: TtsService;
  voices: VoicesService;
  speakers: SpeakersService;
  rateLimits: RateLimits;
  /** Concurrent streams per organization/project (STT sessions, TTS requests and streams), shared via Redis. */
  concurrency: ConcurrencyLimits;
  streamHistory: StreamHistory;
  organization: OrganizationService;
  /** Metering, balance and budgets, usage reports. */
  usage: UsageService;
  /** The balance and budget check billable work runs before it starts. */
  billing: BillingGuard;
  cursors: CursorCodec;
  /** Prometheus metrics of this node (GET /metrics). */
  metrics: Metrics;
  /** Base address of the error reference (more_info = this + '#' + type). */
  errorReferenceUrl(): string;
  routeModules: RouteModule[];
  /** WebSocket handlers by path (the real-time STT and TTS interfaces register here). */
  wsRoutes: WsRoutes;
}
