// /v1/realtime transport adapter (OpenAI Realtime transcription sessions): ws messages in, JSON events out; the
// session rules are in realtime-session.ts. Registered as ctx.wsRoutes['/v1/realtime']; pings and the message size cap
// are the dispatcher's (src/http/websocket.ts).
//
// The key comes at the handshake: `Authorization: Bearer` (the SDK's OpenAIRealtimeWS), or for browsers the
// subprotocols `realtime` + `openai-insecure-api-key.<key>`. A bad key refuses the handshake with OpenAI's error body
// (the SDK reports the HTTP status); the key is checked again, and a single-use temporary key spent, when the
// recognizer starts (the native session's own authentication).
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { handshakeApiKey, messageBytes, type WsHandler, type WsRefusal } from '../../http/websocket.js';
import { backpressure } from '../../http/ws-backpressure.js';
import { newRequestId } from '../../lib/ids.js';
import { ApiError } from '../../wire/api-error.js';
import { requirePermission } from '../auth/permissions.js';
import type { RealtimeService } from '../realtime/service.js';
import { openAiErrorBody } from './errors.js';
import { OpenAiRealtimeSession } from './realtime-session.js';

const KEY_SUBPROTOCOL = 'openai-insecure-api-key.';

/** The key a client offered at the handshake. */
export function openAiHandshakeKey(request: IncomingMessage): string | undefined {
  const header = handshakeApiKey(request);
  if (header) return header;
  const offered = (request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const key = offered.find((p) => p.startsWith(KEY_SUBPROTOCOL))?.slice(KEY_SUBPROTOCOL.length);
  return key || undefined;
}

function query(request: IncomingMessage): URLSearchParams {
  return new URL(request.url ?? '/', 'http://localhost').searchParams;
}

const isBeta = (request: IncomingMessage) => /realtime=v1/.test(String(request.headers['openai-beta'] ?? ''));

export function openAiRealtimeHandler(service: RealtimeService, opts: { defaultModel: string }): WsHandler {
  const handler: WsHandler = (ws: WebSocket, request: IncomingMessage) => {
    const session = new OpenAiRealtimeSession(
      service,
      {
        send(event) {
          if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
        },
        close() {
          if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000);
        },
      },
      {
        beta: isBeta(request),
        urlModel: query(request).get('model') ?? undefined,
        defaultModel: opts.defaultModel,
        requestId: newRequestId(),
        handshakeKey: openAiHandshakeKey(request),
      },
    );
    const pressure = backpressure(ws, session);
    ws.on('message', (data, isBinary) => {
      if (isBinary) session.binary();
      else session.text(messageBytes(data).toString('utf8'));
      pressure.check();
    });
    ws.on('close', () => {
      pressure.stop();
      session.gone();
    });
    session.start();
    return {
      oversized: (limit) =>
        session.fail(new ApiError('invalid_request', `Message larger than ${limit} bytes: send audio in smaller input_audio_buffer.append events.`)),
      malformed: (problem) => session.fail(new ApiError('invalid_request', problem)),
      firstMessageTimeout: (ms) => session.fail(new ApiError('request_timeout', `Request timeout: no event within ${ms / 1000} s of connecting.`)),
    };
  };
  handler.admit = async (request: IncomingMessage): Promise<WsRefusal | undefined> => {
    const intent = query(request).get('intent');
    try {
      if (intent !== null && intent !== 'transcription')
        throw new ApiError('invalid_request', `Only transcription sessions are served here: connect with intent=transcription (got "${intent.slice(0, 64)}").`);
      const ctx = await service.deps.auth.authenticate(openAiHandshakeKey(request), { temporaryUsage: 'transcribe_websocket', consume: false });
      requirePermission(ctx.permissions, 'stt_rt', 'write');
      return undefined;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return { status: err.status, body: openAiErrorBody(err) };
    }
  };
  return handler;
}
