// The Fastify application: transport concerns only. Routes declare what they need (permission, rate
// category) in their config; one hook authenticates, checks the permission and counts the request.
import cors from '@fastify/cors';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { nodeRole } from '../config/node-role.js';
import type { RateCategory, Settings } from '../config/settings.js';
import { sql } from 'kysely';
import { newRequestId } from '../lib/ids.js';
import type { PermissionLevel, PermissionScope } from '../modules/auth/permissions.js';
import { requirePermission } from '../modules/auth/permissions.js';
import { AuthService, type AuthContext, type UsageType } from '../modules/auth/service.js';
import { ApiError, invalidField } from '../wire/api-error.js';
import { errorCatalog } from '../wire/error-catalog.js';
import { restErrorBody } from '../wire/rest-error.js';
import type { AppContext } from '../app-context.js';
import type { App } from './app-types.js';
import { toApiError } from './error-mapping.js';
import { metricsAuthorized } from './metrics.js';
import { MULTIPART_LIMITS } from './single-file-upload.js';
import { validatorCompiler } from './validation.js';

export interface RouteGuard {
  /** Permission needed; `null` means any valid key of the project. */
  permission: { scope: PermissionScope; level: PermissionLevel } | null;
  rate?: RateCategory;
  /** Temporary keys issued for this usage are accepted too. */
  temporaryUsage?: UsageType;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    guard?: RouteGuard;
  }
  interface FastifyRequest {
    auth: AuthContext;
  }
}

/** Longest wait for the database's answer to a readiness check. */
const READY_TIMEOUT_MS = 1000;
/** After an answer to a malformed or late request, a peer that does not close its side is cut. */
const CLOSE_GRACE_MS = 1000;

/**
 * Node's HTTP server timeouts from PARLANCE_HTTP_REQUEST_TIMEOUT_SECONDS: the whole request within it, the headers
 * within at most 60 s of it (Node's default), both checked often enough (Node: every 30 s) to hold a short one.
 */
export function httpTimeouts(settings: Pick<Settings, 'httpRequestTimeoutSeconds'>): {
  requestTimeout: number;
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  const requestTimeout = Math.max(1, Math.round(settings.httpRequestTimeoutSeconds * 1000));
  return {
    requestTimeout,
    headersTimeout: Math.min(60_000, requestTimeout),
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.round(requestTimeout / 4))),
  };
}

export async function buildApp(ctx: AppContext): Promise<App> {
  const { settings } = ctx;
  const timeouts = httpTimeouts(settings);
  const app = Fastify({
    loggerInstance: ctx.log,
    // Fastify's own request lines (with the URL, query string included) are off at every level: the access line
    // in onResponse below is the one line per request.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    // During a graceful shutdown requests already on open connections are still served (with Connection: close, so
    // clients move on), not refused with Fastify's own 503 body.
    return503OnClosing: false,
    trustProxy: settings.trustProxy,
    bodyLimit: settings.jsonBodyLimitBytes,
    // Fastify turns Node's request timeout off; without one, a client trickling its body holds the connection
    // (and its staged upload) for ever.
    requestTimeout: timeouts.requestTimeout,
    http: { headersTimeout: timeouts.headersTimeout, connectionsCheckingInterval: timeouts.connectionsCheckingInterval },
    // Requests Node's HTTP parser rejects (a control character in a header, a broken request line), and requests
    // not received in time, never reach Fastify's routing: answer them on the socket with the same REST body, then
    // close.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: import('node:net').Socket) => {
      // Nothing to answer on a reset socket, nor on one whose response has begun (a request refused before its
      // body was read, whose body then came too slowly).
      const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
      if (err.code === 'ECONNRESET' || !socket.writable || answering) return void socket.destroy();
      const requestId = newRequestId();
      const apiErr =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new ApiError('request_timeout', `Request timeout: the request was not received within ${settings.httpRequestTimeoutSeconds} s.`)
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? new ApiError('invalid_request', 'Malformed HTTP request: the headers are too large.')
            : new ApiError('invalid_request', 'Malformed HTTP request.');
      ctx.log.info({ request_id: requestId, status: apiErr.status, err: err.code }, 'malformed or late HTTP request refused');
      const body = JSON.stringify(restErrorBody(apiErr, requestId, ctx.errorReferenceUrl()));
      socket.end(
        `HTTP/1.1 ${apiErr.status} ${STATUS_CODES[apiErr.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      );
      // A peer that neither reads the answer nor closes its side is cut after a moment.
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    },
    // Errors raised by the router before any hook runs (bad percent-encoding, a path parameter over
    // maxParamLength): answer with the REST error body and request id, not Fastify's own JSON.
    frameworkErrors: (err, req, reply) => {
      const apiErr =
        err.code === 'FST_ERR_BAD_URL'
          ? new ApiError('invalid_request', 'Malformed URL: invalid percent-encoding in the path.')
          : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new ApiError('invalid_request', 'A path segment is too long.')
            : toApiError(err);
      (reply as unknown as FastifyReply)
        .code(apiErr.status)
        .header('x-request-id', req.id)
        .headers(apiErr.headers)
        .send(restErrorBody(apiErr, req.id, ctx.errorReferenceUrl()));
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  app.setValidatorCompiler(validatorCompiler());

  // The SDKs send `Content-Type: application/json` on bodyless GET/DELETE and on some POSTs (docs/wire-compat.md,
  // "REST conventions"): an empty body is "no body", not malformed JSON.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '' || (typeof body === 'string' && body.trim() === '')) return done(null, undefined);
    void jsonParser(req, body as string, done);
  });

  // Web pages on the listed origins may call the API (the browser SDKs' POST /tts, the REST API). Keys travel in
  // headers, never cookies: no credentials. Error answers carry the headers too, so a page can read a 401 or 429.
  if (settings.corsOrigins.length)
    await app.register(cors, {
      origin: settings.corsOrigins.includes('*') ? '*' : settings.corsOrigins,
      credentials: false,
      exposedHeaders: ['x-request-id', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'],
      maxAge: 600,
    });

  await app.register(multipart, { limits: { fileSize: settings.maxFileSizeBytes, ...MULTIPART_LIMITS } });

  // A worker node answers only its probes and metrics: no API routes (server.ts), no API documentation.
  const { servesApi } = nodeRole(settings);
  if (servesApi) {
    await app.register(swagger, {
      openapi: {
        openapi: '3.0.3',
        info: { title: 'Parlance API', version: '1.0.0', description: 'Self-hosted speech-to-text and text-to-speech API.' },
        components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
        security: [{ bearerAuth: [] }],
      },
    });
  }

  // Every response names its request; error bodies carry the same id.
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });

  app.addHook('onRequest', async (req, reply) => {
    const guard = req.routeOptions.config?.guard;
    if (!guard) return;
    req.auth = await authenticate(ctx, req, guard);
    if (guard.permission) requirePermission(req.auth.permissions, guard.permission.scope, guard.permission.level);
    if (guard.rate) {
      const headers = await ctx.rateLimits.consume(guard.rate, req.auth.organizationId, req.auth.projectId);
      if (headers) reply.headers({ ...headers });
    }
  });

  // Text that cannot be stored as sent is refused alike on both dialects, before validation: a NUL character
  // (PostgreSQL cannot store it and would answer 500; SQLite would store it), or a lone surrogate escape such as
  // "\ud800" in JSON (no UTF-8 form exists: the databases keep U+FFFD or bytes that read back as it, so a record
  // would differ from the answer that created it). Path parameters, query and JSON body.
  app.addHook('preValidation', async (req) => {
    const bad = unstorableText(req.params, '') ?? unstorableText(req.query, '') ?? unstorableText(req.body, '');
    if (bad !== undefined) throw invalidField(bad.at || 'body', bad.problem, 'invalid_format');
  });

  app.setErrorHandler((err, req, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.debug({ err: apiErr.message, type: apiErr.type }, 'request rejected');
    reply
      .code(apiErr.status)
      .headers(apiErr.headers)
      .send(restErrorBody(apiErr, req.id, ctx.errorReferenceUrl()));
  });

  // Unknown paths → 404; a known path with another method → 405 with Allow. Paths match exactly as the
  // router does (a trailing slash is another path), so a 405 never names the method it refuses.
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`);
    for (const method of methods) routes.push({ method, pattern });
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    const err = allowed.length
      ? new ApiError('invalid_request', `Method ${req.method} is not allowed on ${path}.`, { status: 405, headers: { allow: allowed.join(', ') } })
      : servesApi
        ? new ApiError('invalid_request', `No route ${req.method} ${path}.`, { status: 404 })
        : new ApiError('invalid_request', `This is a worker node: ${path} is served by the API nodes.`, { status: 404 });
    reply
      .code(err.status)
      .headers(err.headers)
      .send(restErrorBody(err, req.id, ctx.errorReferenceUrl()));
  });

  // The access log: one line per request at info (request_id comes with the request's logger). Never the query
  // string, headers or keys: the route pattern, or the bare path when no route matched (404, 405).
  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url;
    ctx.metrics.httpDuration.observe({ method: req.method, route: route ?? 'unmatched', status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    req.log.info(
      {
        method: req.method,
        ...(route ? { route } : { path: req.url.split('?')[0] }),
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(req.auth ? { project_id: req.auth.projectId } : {}),
      },
      'request completed',
    );
  });

  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  // Readiness for load balancers and orchestrators: the database answers (within a second). /health stays a
  // liveness check that looks at nothing else.
  app.get('/ready', { schema: { hide: true } }, async (_req, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const database = await Promise.race([
      sql`select 1`.execute(ctx.db.kysely).then(
        () => 'ok' as const,
        () => 'unreachable' as const,
      ),
      new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), READY_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    const ok = database === 'ok';
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not_ready', checks: { database } });
  });
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (!metricsAuthorized(settings.metricsToken, req.headers.authorization))
      throw new ApiError('unauthenticated', 'GET /metrics needs Authorization: Bearer <PARLANCE_METRICS_TOKEN>.');
    return reply.type(ctx.metrics.contentType).send(await ctx.metrics.render());
  });
  if (servesApi) {
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    app.get('/docs/errors', { schema: { hide: true } }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(errorReferencePage()));
  }

  for (const mountRoutes of ctx.routes) await mountRoutes(app);
  return app;
}

async function authenticate(ctx: AppContext, req: FastifyRequest, guard: RouteGuard): Promise<AuthContext> {
  const token = AuthService.bearerToken(req.headers.authorization);
  return ctx.auth.authenticate(token, { temporaryUsage: guard.temporaryUsage });
}

function errorReferencePage(): string {
  const rows = Object.entries(errorCatalog)
    .map(
      ([type, e]) =>
        `<tr id="${type.replace(/_/g, '-')}"><td><code>${type}</code></td><td>${e.status}</td><td>${e.surfaces.join(', ')}</td><td>${e.message}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Parlance error reference</title></head><body>
<h1>Error reference</h1><p>Clients branch on <code>error_type</code>; messages may change.</p>
<table><thead><tr><th>error_type</th><th>HTTP</th><th>Surfaces</th><th>Meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

/** A UTF-16 surrogate that is not half of a pair (with the u flag, a pair is one code point, never a surrogate). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Why `text` cannot be stored as sent, or undefined. */
function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (an unpaired surrogate such as \\ud800 is not)';
  return undefined;
}

/**
 * The first string (or key) inside a parsed value that cannot be stored as sent (textProblem): its path ('' for the
 * value itself) and why; else undefined.
 */
export function unstorableText(value: unknown, at: string, depth = 0): { at: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { at, problem } : undefined;
  }
  if (value === null || typeof value !== 'object' || depth > 32) return undefined;
  for (const [k, v] of Object.entries(value)) {
    const name = at ? `${at}.${k}` : k;
    const keyProblem = textProblem(k);
    if (keyProblem) return { at: at || 'a field name', problem: keyProblem };
    const found = unstorableText(v, name, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
