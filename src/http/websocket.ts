// One upgrade dispatcher for the WebSocket interfaces (/transcribe-websocket, /tts-websocket, /v1/realtime): modules
// register a handler per path; anything else is refused before the handshake completes. Credentials travel in the
// first JSON messages (docs/wire-compat.md, "Authentication on the sockets") or at the handshake (handshakeApiKey), and each module authenticates; a
// handler may also refuse the handshake itself (`admit`: OpenAI's clients expect a bad key as an HTTP error).
import type { EventEmitter } from 'node:events';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { atMost } from '../lib/at-most.js';
import { newRequestId } from '../lib/ids.js';
import { inWsSession, type WsSession } from './websocket-session.js';

/** What a handler may ask the dispatcher to tell it about its connection. */
export interface WsConnectionHooks {
  /** A message over maxPayload arrived: send the surface's error frame now; ws closes the socket right after. */
  oversized?(limitBytes: number): void;
  /**
   * A message ws refuses (a text message that is not UTF-8, a malformed frame): send the surface's error frame, saying
   * `problem`, now; ws closes the socket right after (1007 or 1002).
   */
  malformed?(problem: string): void;
  /** No message came within firstMessageMs of connecting: send the surface's error frame and close. */
  firstMessageTimeout?(ms: number): void;
}

/** An HTTP answer instead of the handshake. */
export interface WsRefusal {
  status: number;
  body: object;
}

export type WsHandler = ((socket: WebSocket, request: IncomingMessage) => WsConnectionHooks | void) & {
  /** Checked before the handshake completes: a refusal is sent as HTTP and the connection closed. */
  admit?(request: IncomingMessage): Promise<WsRefusal | undefined>;
};

/** Subprotocol a browser offers to carry its key: `new WebSocket(url, ['soniox-api-key', encodeURIComponent(key)])`. */
export const API_KEY_SUBPROTOCOL = 'soniox-api-key';
/** OpenAI's browser clients offer `realtime` plus `openai-insecure-api-key.<key>` (src/modules/openai/realtime-routes.ts). */
export const OPENAI_SUBPROTOCOL = 'realtime';

/**
 * The API key offered at the handshake: `Authorization: Bearer <key>`, or (browsers cannot set headers) the
 * protocol after `soniox-api-key` in Sec-WebSocket-Protocol, percent-encoded because `:` of temporary keys is not
 * allowed in a subprotocol token.
 */
export function handshakeApiKey(request: IncomingMessage): string | undefined {
  const bearer = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  if (bearer) return bearer[1];
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const at = offered.indexOf(API_KEY_SUBPROTOCOL);
  const encoded = at >= 0 ? offered[at + 1] : undefined;
  if (!encoded) return undefined;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded; // not percent-encoded: authentication refuses it if it is not a key
  }
}

/** A message's bytes, whatever form ws delivered them in. */
export function messageBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export interface WsRoutes {
  [path: string]: WsHandler;
}

export interface WebSocketOptions {
  /** Largest incoming message in bytes; bigger ones close the socket with 1009. */
  maxPayload: number;
  /** Interval of protocol-level pings; a peer that misses one is terminated (frees its resources at once). */
  pingIntervalMs: number;
  /**
   * A connection that sends no message this long after the handshake is closed (after the surface's error frame):
   * unauthenticated idle sockets would otherwise hold memory and a file descriptor for as long as they answer pings.
   */
  firstMessageMs: number;
  /** The access log: one line per connection when it closes (route, close code, duration, session id, project). */
  log?: { info(fields: Record<string, unknown>, msg: string): void };
}

/** After the surface's timeout frame, a peer that does not complete the closing handshake is cut. */
const CLOSE_GRACE_MS = 1000;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
};

function refuse(socket: Duplex, status: number, reason: string, payload: object = { error: reason }): void {
  const body = JSON.stringify(payload);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export interface WebSocketDispatcher {
  /** Graceful shutdown began: refuse new connections (503 before the handshake); open ones carry on. */
  refuseNew(): void;
  /** Close every connection: those still open after `graceMs` (closing handshakes, last frames) are cut. */
  close(graceMs?: number): Promise<void>;
}

export function attachWebSockets(server: Server, routes: WsRoutes, opts: WebSocketOptions): WebSocketDispatcher {
  let refusing = false;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: opts.maxPayload,
    perMessageDeflate: false,
    // A client that offered the key subprotocol must see it selected, or browsers fail the handshake.
    handleProtocols: (protocols) => (protocols.has(API_KEY_SUBPROTOCOL) ? API_KEY_SUBPROTOCOL : protocols.has(OPENAI_SUBPROTOCOL) ? OPENAI_SUBPROTOCOL : false),
  });
  const alive = new WeakMap<WebSocket, boolean>();

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const handler = Object.prototype.hasOwnProperty.call(routes, path) ? routes[path] : undefined;
    if (!handler) return refuse(socket, 404, 'Not Found');
    if (refusing) return refuse(socket, 503, 'Service Unavailable');
    if (!handler.admit) return accept(handler, request, socket, head);
    // A reset while the check runs must not crash the process (the socket has no other listener yet).
    const onError = () => socket.destroy();
    socket.on('error', onError);
    handler.admit(request).then(
      (refusal) => {
        socket.off('error', onError);
        if (socket.destroyed) return;
        if (refusal) return refuse(socket, refusal.status, REASONS[refusal.status] ?? 'Error', refusal.body);
        if (refusing) return refuse(socket, 503, 'Service Unavailable');
        accept(handler, request, socket, head);
      },
      () => refuse(socket, 500, 'Internal Server Error'),
    );
  });

  function accept(handler: WsHandler, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    wss.handleUpgrade(request, socket, head, (ws) => {
      const session: WsSession = {};
      const sessionId = newRequestId();
      const opened = performance.now();
      // Every event of this socket runs in the session's scope, so the module's work for it does (websocket-session.ts).
      const emit = ws.emit.bind(ws);
      ws.emit = ((event: string | symbol, ...args: unknown[]) => inWsSession(session, () => emit(event, ...args))) as typeof ws.emit;
      ws.once('close', (code: number) => {
        opts.log?.info(
          {
            session_id: sessionId,
            route: (request.url ?? '/').split('?')[0],
            close_code: code,
            duration_ms: Math.round((performance.now() - opened) * 10) / 10,
            ...(session.projectId ? { project_id: session.projectId } : {}),
          },
          'websocket session ended',
        );
      });
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      // Protocol errors (oversized or malformed frames) close the socket themselves; without a listener
      // the 'error' event would crash the process.
      ws.on('error', () => undefined);
      const hooks = inWsSession(session, () => handler(ws, request));
      const firstMessage = setTimeout(() => {
        if (ws.readyState !== ws.OPEN) return;
        if (hooks?.firstMessageTimeout) hooks.firstMessageTimeout(opts.firstMessageMs);
        else ws.close(1008, 'no message');
        setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
      }, opts.firstMessageMs);
      firstMessage.unref();
      ws.once('message', () => clearTimeout(firstMessage));
      ws.once('close', () => clearTimeout(firstMessage));
      if (hooks?.oversized || hooks?.malformed) {
        // ws rejects an oversized message from its frame header (nothing is buffered), and a text message that is not
        // UTF-8 or a malformed frame as it parses it, and closes (1009, 1007, 1002) in the same tick; a listener placed
        // before its own on the frame parser lets the surface send its error frame first (ws has no public hook).
        const receiver = (ws as unknown as { _receiver?: EventEmitter })._receiver;
        receiver?.prependListener('error', (err: { code?: string }) => {
          if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') hooks.oversized?.(opts.maxPayload);
          else if (err.code === 'WS_ERR_INVALID_UTF8') hooks.malformed?.('A text message is not valid UTF-8.');
          else hooks.malformed?.('Malformed WebSocket frame.');
        });
      }
    });
  }

  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.get(ws)) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, opts.pingIntervalMs);
  heartbeat.unref();

  return {
    refuseNew() {
      refusing = true;
    },
    async close(graceMs = 0) {
      refusing = true;
      clearInterval(heartbeat);
      if (graceMs > 0 && wss.clients.size > 0)
        await atMost(Promise.all([...wss.clients].map((ws) => new Promise((resolve) => ws.once('close', resolve)))), graceMs);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
