// One upgrade dispatcher for the WebSocket interfaces (/transcribe-websocket, /tts-websocket): modules
// register a handler per path; anything else is refused before the handshake completes. Credentials
// travel in the first JSON messages (sdk-wire-notes §1.4), so no authentication happens here.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

export type WsHandler = (socket: WebSocket, request: IncomingMessage) => void;

export interface WsRoutes {
  [path: string]: WsHandler;
}

export interface WebSocketOptions {
  /** Largest incoming message in bytes; bigger ones close the socket with 1009. */
  maxPayload: number;
  /** Interval of protocol-level pings; a peer that misses one is terminated (frees its resources at once). */
  pingIntervalMs: number;
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const body = JSON.stringify({ error: reason });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export function attachWebSockets(server: Server, routes: WsRoutes, opts: WebSocketOptions): { close(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxPayload, perMessageDeflate: false });
  const alive = new WeakMap<WebSocket, boolean>();

  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const handler = Object.prototype.hasOwnProperty.call(routes, path) ? routes[path] : undefined;
    if (!handler) return refuse(socket, 404, 'Not Found');
    wss.handleUpgrade(request, socket, head, (ws) => {
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      // Protocol errors (oversized or malformed frames) close the socket themselves; without a listener
      // the 'error' event would crash the process.
      ws.on('error', () => undefined);
      handler(ws, request);
    });
  });

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
    async close() {
      clearInterval(heartbeat);
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
