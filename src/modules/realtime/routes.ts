// /transcribe-websocket transport adapter: ws messages in, JSON text frames out (never binary: the legacy web SDK
// JSON-parses every frame, D22). Registered as ctx.wsRoutes['/transcribe-websocket']; pings and the message size
// cap are the dispatcher's (src/http/websocket.ts).
//
// Authentication: the `api_key` field of the configuration message (spec); when it is absent, the key offered at
// the handshake (Authorization header or the soniox-api-key subprotocol, see handshakeApiKey) is used instead.
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import { handshakeApiKey, type WsHandler } from '../../http/websocket.js';
import { newRequestId } from '../../lib/ids.js';
import { ApiError } from '../../wire/api-error.js';
import type { RealtimeService } from './service.js';

/** Pause reading from a client that sends audio much faster than it is recognised; resume once caught up. */
const PAUSE_ABOVE_BYTES = 8 << 20;
const RESUME_BELOW_BYTES = 2 << 20;

function toBytes(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

export function realtimeWsHandler(service: RealtimeService): WsHandler {
  return (ws: WebSocket, request: IncomingMessage) => {
    const session = service.open(
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
    let resumeTimer: NodeJS.Timeout | undefined;
    ws.on('message', (data, isBinary) => {
      const bytes = toBytes(data);
      if (isBinary) session.binary(bytes);
      else session.text(bytes.toString('utf8'));
      if (!resumeTimer && session.backlogBytes > PAUSE_ABOVE_BYTES) {
        ws.pause();
        resumeTimer = setInterval(() => {
          if (session.closed || session.backlogBytes < RESUME_BELOW_BYTES) {
            clearInterval(resumeTimer);
            resumeTimer = undefined;
            ws.resume();
          }
        }, 20);
      }
    });
    ws.on('close', () => {
      if (resumeTimer) clearInterval(resumeTimer);
      session.gone();
    });
    return {
      oversized: (limit) => session.fail(new ApiError('invalid_request', `Message larger than ${limit} bytes: send audio in smaller chunks.`)),
      firstMessageTimeout: (ms) =>
        session.fail(new ApiError('request_timeout', `Request timeout: no configuration message within ${ms / 1000} s of connecting.`)),
    };
  };
}
