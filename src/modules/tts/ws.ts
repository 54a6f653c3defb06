// /tts-websocket transport adapter: ws messages in, JSON text frames out (audio in base64). Registered as
// wsRoutes['/tts-websocket'] (module.ts); pings, the message size cap and the first-message timeout are the dispatcher's
// (src/http/websocket.ts). The streams themselves are TtsSession's (stream-session.ts).
import type { IncomingMessage } from 'node:http';
import type { RawData, WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { Settings } from '../../config/settings.js';
import { handshakeApiKey, type WsHandler } from '../../http/websocket.js';
import type { LiveSurface } from '../../lib/live-set.js';
import { ApiError } from '../../wire/api-error.js';
import type { TtsService } from './service.js';
import { TtsSockets, ttsSocketOptions } from './stream-session.js';

/** The TTS WebSocket surface: its handler, and its open connections for a graceful shutdown. */
export interface TtsWebSocketSurface extends LiveSurface {
  handler: WsHandler;
}

function toText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

export function ttsWebSocketSurface(deps: { tts: TtsService; log: Logger; settings: Settings; errorReferenceUrl(): string }): TtsWebSocketSurface {
  const sockets = new TtsSockets({ tts: deps.tts, log: deps.log, errorReferenceUrl: () => deps.errorReferenceUrl() }, ttsSocketOptions(deps.settings));
  return {
    handler(ws: WebSocket, request: IncomingMessage) {
      const session = sockets.open(
        {
          send(frame) {
            if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
          },
          close() {
            ws.close(1000);
          },
        },
        handshakeApiKey(request),
      );
      ws.on('message', (data, isBinary) => (isBinary ? session.binary() : session.text(toText(data))));
      ws.on('close', () => session.gone());
      return {
        oversized: (limit) => session.fail(new ApiError('invalid_request', `Message larger than ${limit} bytes.`)),
        malformed: (problem) => session.fail(new ApiError('invalid_request', problem)),
        firstMessageTimeout: (ms) => session.fail(new ApiError('request_timeout', `Request timeout: no message within ${ms / 1000} s of connecting.`)),
      };
    },
    drain: () => sockets.drain(),
    abortAll: () => sockets.abortAll(),
  };
}
