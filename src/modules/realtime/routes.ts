// /transcribe-websocket transport adapter: ws messages into the Soniox renderer (soniox-socket.ts), its frames out as
// JSON text (never binary: the legacy web SDK JSON-parses every frame; docs/wire-compat.md, "Real-time STT WebSocket"). Registered as ctx.wsRoutes['/transcribe-websocket']; pings and the message size
// cap are the dispatcher's (src/http/websocket.ts).
// The key offered at the handshake (Authorization header or the soniox-api-key subprotocol) is handshakeApiKey's.
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { handshakeApiKey, messageBytes, type WsHandler } from '../../http/websocket.js';
import { backpressure } from '../../http/ws-backpressure.js';
import { newRequestId } from '../../lib/ids.js';
import { ApiError } from '../../wire/api-error.js';
import type { RealtimeService } from './service.js';
import { SonioxSocket } from './soniox-socket.js';

export function realtimeWsHandler(service: RealtimeService): WsHandler {
  return (ws: WebSocket, request: IncomingMessage) => {
    const session = new SonioxSocket(
      service,
      {
        send(frame) {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
        },
        close() {
          if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
        },
      },
      newRequestId(),
      handshakeApiKey(request),
    );
    const pressure = backpressure(ws, session);
    ws.on('message', (data, isBinary) => {
      const bytes = messageBytes(data);
      if (isBinary) session.binary(bytes);
      else session.text(bytes.toString('utf8'));
      pressure.check();
    });
    ws.on('close', () => {
      pressure.stop();
      session.gone();
    });
    return {
      oversized: (limit) => session.fail(new ApiError('invalid_request', `Message larger than ${limit} bytes: send audio in smaller chunks.`)),
      malformed: (problem) => session.fail(new ApiError('invalid_request', problem)),
      firstMessageTimeout: (ms) =>
        session.fail(new ApiError('request_timeout', `Request timeout: no configuration message within ${ms / 1000} s of connecting.`)),
    };
  };
}
