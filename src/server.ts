// Process assembly: settings → services (create-context.ts) → HTTP and socket listeners, and a graceful stop.
// `parlance serve` and the tests use this.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, type Settings } from './config/settings.js';
import { startSpawner } from './lib/spawner/spawn-child.js';
import { startWyoming } from './modules/wyoming/server.js';
import { buildApp, httpTimeouts } from './http/app.js';
import type { AppContext } from './app-context.js';
import type { App } from './http/app-types.js';
import { nodeRole } from './config/node-role.js';
import { attachWebSockets, type WebSocketDispatcher } from './http/websocket.js';
import { atMost } from './lib/at-most.js';
import { newRequestId } from './lib/ids.js';
import { ApiError } from './wire/api-error.js';
import { restErrorBody } from './wire/rest-error.js';
import { createContext } from './create-context.js';

export interface RunningServer {
  app: App;
  ctx: AppContext;
  url: string;
  /** Base URL of the separate TTS interface, when PARLANCE_TTS_PORT is set. */
  ttsUrl?: string;
  /** Address of the Wyoming server (tcp://host:port), when PARLANCE_WYOMING_PORT is set. */
  wyomingUrl?: string;
  /** Set when this start created the first organization, project and key. */
  bootstrap?: { organization_id: string; project_id: string; api_key: string };
  /**
   * Stop. With `drainMs`, a graceful shutdown: no new connections or sessions; live real-time sessions end as if their
   * clients had sent the end frame, TTS streams and HTTP requests already under way finish; whatever is still live
   * after `drainMs` (or once `hurry` aborts) gets its error frame and is closed. Async jobs are left for takeover.
   */
  close(opts?: { drainMs?: number; hurry?: AbortSignal }): Promise<void>;
}

/** `listen()`, with a port in use or not permitted reported as a configuration error (one line, exit 2). */
async function listenOrExplain<T>(listen: () => Promise<T>, host: string, port: number, setting: string): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ConfigError(`port ${port} on ${host} is in use: stop what holds it, or choose another port (${setting})`);
    if (code === 'EACCES') throw new ConfigError(`port ${port} on ${host} may not be used by this user: choose a port above 1023 (${setting})`);
    if (code === 'EADDRNOTAVAIL') throw new ConfigError(`address ${host} is not on this machine (--host / PARLANCE_HOST)`);
    throw err;
  }
}

/** Closing handshakes and last frames after the drain: how long sockets get before they are cut. */
const SOCKET_CLOSE_GRACE_MS = 1000;

export async function startServer(settings: Settings): Promise<RunningServer> {
  // Forked while this process is small; every child process after it is started through it (lib/spawner).
  startSpawner();
  const { servesApi, runsJobs } = nodeRole(settings);
  const handle = await createContext(settings);
  const { ctx, setPublicUrl, startHousekeeping } = handle;
  const app = await buildApp(ctx);
  // The speech model and a first warm streaming decoder load before the server listens: once it answers (/health
  // included), the first session is served as fast as later ones. A model that fails here loads on first use.
  if (settings.sttPreload) await handle.preloadSpeech();
  await listenOrExplain(() => app.listen({ host: settings.host, port: settings.port }), settings.host, settings.port, '--port / PARLANCE_PORT');
  const sockets = attachWebSockets(app.server, ctx.wsRoutes, {
    log: ctx.log,
    maxPayload: settings.wsMaxMessageBytes,
    pingIntervalMs: settings.wsPingIntervalSeconds * 1000,
    firstMessageMs: settings.wsFirstMessageTimeoutSeconds * 1000,
  });
  const host = settings.host === '0.0.0.0' || settings.host === '::' ? '127.0.0.1' : settings.host;
  const urlOf = (server: Server) => `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  const url = urlOf(app.server);
  if (!servesApi && settings.ttsPort >= 0) ctx.log.warn({ tts_port: settings.ttsPort }, 'a worker node serves no text-to-speech: PARLANCE_TTS_PORT is ignored');
  const tts =
    servesApi && settings.ttsPort >= 0
      ? await listenOrExplain(() => listenTts(app, ctx, settings), settings.host, settings.ttsPort, '--tts-port / PARLANCE_TTS_PORT')
      : undefined;
  // The first key is made once the server could listen: a start that fails (a port in use) creates nothing. A worker
  // node leaves it to the nodes that serve the API the key is for.
  let bootstrap: RunningServer['bootstrap'];
  if (servesApi && !(await ctx.tenancy.isBootstrapped())) {
    const b = await ctx.tenancy.bootstrap();
    bootstrap = { organization_id: b.organization_id, project_id: b.project_id, api_key: b.api_key };
  }
  setPublicUrl(settings.publicUrl || url);
  if (!servesApi && settings.wyomingPort >= 0)
    ctx.log.warn({ wyoming_port: settings.wyomingPort }, 'a worker node serves no Wyoming: PARLANCE_WYOMING_PORT is ignored');
  // After the bootstrap: with no PARLANCE_WYOMING_PROJECT it meters to the first organization's first project.
  const wyoming =
    servesApi && settings.wyomingPort >= 0
      ? await listenOrExplain(() => startWyoming(ctx, settings), settings.wyomingHost, settings.wyomingPort, 'PARLANCE_WYOMING_PORT')
      : undefined;
  // Jobs start after the API listens: a crashed predecessor's jobs resume now.
  if (runsJobs) await handle.queue.start();
  // PARLANCE_MODELS: pulled as jobs (a pull already queued or done is not queued again); the start does not wait.
  void handle.pullConfiguredModels().catch((err: unknown) => ctx.log.error({ err }, 'PARLANCE_MODELS: the pulls could not be queued'));
  const stopHousekeeping = startHousekeeping();
  let closing: Promise<void> | undefined;
  // A keep-alive connection whose response finishes during the drain is closed then, not after Fastify's 72 s idle
  // timeout (server.close() closes only the connections idle at the moment it is called).
  for (const server of [app.server, tts?.server]) {
    server?.on('request', (_req: IncomingMessage, res: ServerResponse) =>
      res.once('close', () => {
        if (closing) setImmediate(() => server.closeIdleConnections());
      }),
    );
  }
  const shutdown = async ({ drainMs = 0, hurry }: { drainMs?: number; hurry?: AbortSignal }) => {
    stopHousekeeping();
    sockets.refuseNew();
    tts?.sockets.refuseNew();
    // Stop listening; requests already under way finish (Fastify answers them with Connection: close).
    const httpClosed = Promise.all([app.close(), tts?.close(), wyoming?.close()]);
    const drained = Promise.all(handle.live.map((surface) => surface.drain()));
    const started = Date.now();
    if (drainMs > 0) {
      ctx.log.info({ drain_ms: drainMs }, 'draining live sessions and requests');
      await atMost(Promise.all([drained, httpClosed]), drainMs, hurry);
      ctx.log.info({ ms: Date.now() - started }, 'drain over');
    }
    for (const surface of handle.live) surface.abortAll();
    await Promise.all([sockets.close(SOCKET_CLOSE_GRACE_MS), tts?.sockets.close(SOCKET_CLOSE_GRACE_MS)]);
    app.server.closeAllConnections();
    tts?.server.closeAllConnections();
    await httpClosed;
    await handle.close();
    ctx.log.info({ ms: Date.now() - started }, 'stopped');
  };
  return {
    app,
    ctx,
    url,
    ttsUrl: tts && urlOf(tts.server),
    wyomingUrl: wyoming?.url,
    bootstrap,
    close(opts = {}) {
      closing ??= shutdown(opts);
      return closing;
    },
  };
}

/** Paths the separate TTS interface answers; everything else there is 404. */
const TTS_HTTP_PATHS = new Set(['/tts', '/tts/with-timestamps', '/v1/tts-models', '/health', '/ready']);

/**
 * The TTS interface on its own port (the SDKs keep a separate TTS base URL): a plain HTTP server handing the TTS
 * paths to the same Fastify router, so validation, auth, errors and streaming are the main port's, plus the TTS
 * WebSocket.
 */
async function listenTts(app: App, ctx: AppContext, settings: Settings): Promise<{ server: Server; sockets: WebSocketDispatcher; close(): Promise<void> }> {
  // The main port's request timeouts; Node's own 408 (no body) answers a request not received in time.
  const server = createServer(httpTimeouts(settings), (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (TTS_HTTP_PATHS.has(path)) return app.routing(req, res);
    const err = new ApiError('invalid_request', `This is the text-to-speech interface: ${path} is served on the main port.`, { status: 404 });
    const body = JSON.stringify(restErrorBody(err, newRequestId(), ctx.errorReferenceUrl()));
    res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  const sockets = attachWebSockets(
    server,
    { '/tts-websocket': ctx.wsRoutes['/tts-websocket']! },
    {
      log: ctx.log,
      maxPayload: settings.wsMaxMessageBytes,
      pingIntervalMs: settings.wsPingIntervalSeconds * 1000,
      firstMessageMs: settings.wsFirstMessageTimeoutSeconds * 1000,
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.ttsPort, settings.host, () => resolve());
  });
  return {
    server,
    sockets,
    /** Stop listening; resolves once the connections still open are gone. */
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
