// Every message of /transcribe-websocket (docs/wire-compat.md, "Real-time STT WebSocket").
//
// Client messages: the first is the JSON configuration (a text frame); after it come audio (binary frames, or base64
// in text frames), control messages (JSON text frames with a `type`: finalize, keepalive) and the end of the stream
// (an empty text or binary frame). parseSttClientMessage turns one frame into a typed message or the error that ends
// the session; control messages are checked against their schemas (src/wire/validate.ts). The configuration's fields
// are validated by the real-time service (modules/realtime/config.ts) once the caller is authenticated. Errors name the
// field by its dotted location in the message; the error frame has no validation_errors.
//
// Server frames are JSON text, never binary: result frames (tokens, processed audio, `finished` on the last one) and
// one error frame `{tokens: [], error_code, error_type, error_message, more_info, request_id}` before the server
// closes with 1000. error_code is the integer HTTP status, and result frames never carry error_code / error_message.
import { type Static, Type } from '@sinclair/typebox';
import { ApiError } from './api-error.js';
import { moreInfoUrl } from './error-catalog.js';
import { compileValidator } from './validate.js';

// ---- client → server ----

/**
 * The configuration message's envelope: the key, which may also come with the handshake. Its other fields (spec table
 * "Real-time transcription WebSocket" plus the SDKs' keys) have their rules in RealtimeConfigFields
 * (modules/realtime/config.ts), checked once the caller is authenticated. Unknown keys are allowed: a server that
 * rejected them would fail SDK sessions.
 */
export const SttConfigMessage = Type.Object({ api_key: Type.Optional(Type.String()) }, { additionalProperties: true });
export type SttConfigMessage = Static<typeof SttConfigMessage>;

/** Everything before it is made final; answered with a `<fin>` token. */
export const SttFinalizeMessage = Type.Object({
  type: Type.Literal('finalize'),
  trailing_silence_ms: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
});
export type SttFinalizeMessage = Static<typeof SttFinalizeMessage>;

/** Keeps a paused stream open (once audio came); never answered. */
export const SttKeepaliveMessage = Type.Object({ type: Type.Literal('keepalive') });
export type SttKeepaliveMessage = Static<typeof SttKeepaliveMessage>;

/** The control messages of a stream, told apart by `type`. */
export const SttControlMessage = Type.Union([SttFinalizeMessage, SttKeepaliveMessage]);
export type SttControlMessage = Static<typeof SttControlMessage>;
const controlMessage = compileValidator(SttControlMessage, { root: 'message' });

/** The configuration once parsed: `body` is the whole message, checked by the service (parseRealtimeConfig). */
export type SttConfigReceived = { type: 'config'; api_key: unknown; body: Record<string, unknown> };

/** A message after the configuration, once parsed: `type` says which it is. */
export type SttStreamMessage =
  /** Audio bytes (possibly none: a text frame of whitespace). */
  { type: 'audio'; data: Uint8Array } | { type: 'end' } | { type: 'finalize'; trailing_silence_ms?: number } | { type: 'keepalive' };

export type SttClientMessage = SttConfigReceived | SttStreamMessage;

export type SttParseResult<M extends SttClientMessage = SttClientMessage> = { ok: true; message: M } | { ok: false; error: ApiError };

// A JSON control message, told apart from base64 audio before any decoding (spaced variants too).
const CONTROL = /^\s*\{/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const invalid = (message: string): { ok: false; error: ApiError } => ({ ok: false, error: new ApiError('invalid_request', `Invalid request: ${message}`) });
const ok = <M extends SttClientMessage>(message: M): { ok: true; message: M } => ({ ok: true, message });

/**
 * One client frame: a text frame as a string, a binary frame as bytes. `stage`: `config` for the first message of
 * the connection, `stream` for every message after it.
 */
export function parseSttClientMessage(data: string | Uint8Array, stage: 'config'): SttParseResult<SttConfigReceived>;
export function parseSttClientMessage(data: string | Uint8Array, stage: 'stream'): SttParseResult<SttStreamMessage>;
export function parseSttClientMessage(data: string | Uint8Array, stage: 'config' | 'stream'): SttParseResult {
  if (stage === 'config') {
    if (typeof data !== 'string') return invalid('the first message must be the JSON configuration (a text frame), not audio.');
    let msg: unknown;
    try {
      msg = JSON.parse(data);
    } catch {
      return invalid('the configuration message is not valid JSON.');
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return invalid('the configuration message must be a JSON object.');
    const body = msg as Record<string, unknown>;
    return ok<SttConfigReceived>({ type: 'config', api_key: body.api_key, body });
  }
  if (typeof data !== 'string') return ok(data.byteLength === 0 ? { type: 'end' } : { type: 'audio', data });
  if (CONTROL.test(data)) return parseControl(data);
  if (data.length === 0) return ok({ type: 'end' });
  const b64 = data.replace(/\s+/g, '');
  if (b64.length % 4 === 1 || !BASE64.test(b64)) return invalid('text audio message is not valid base64.');
  return ok({ type: 'audio', data: Buffer.from(b64, 'base64') });
}

function parseControl(text: string): SttParseResult<SttStreamMessage> {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return invalid('malformed JSON control message.');
  }
  const m = controlMessage.check(msg);
  if (m instanceof ApiError) return { ok: false, error: m };
  if (m.type === 'keepalive') return ok({ type: 'keepalive' });
  return ok(typeof m.trailing_silence_ms === 'number' ? { type: 'finalize', trailing_silence_ms: m.trailing_silence_ms } : { type: 'finalize' });
}

// ---- server → client ----

export const SttToken = Type.Object(
  {
    text: Type.String(),
    start_ms: Type.Optional(Type.Number()),
    end_ms: Type.Optional(Type.Number()),
    confidence: Type.Number(),
    is_final: Type.Boolean(),
    language: Type.Optional(Type.String()),
    translation_status: Type.Optional(Type.Union([Type.Literal('original'), Type.Literal('translation'), Type.Literal('none')])),
    source_language: Type.Optional(Type.String()),
    /** With diarization: final tokens carry their speaker, non-final ones a provisional guess. */
    speaker: Type.Optional(Type.String()),
    /** Parlance, multichannel sessions: the channel (0-based) the token was heard on (`<end>` too: its channel's). */
    channel: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type SttToken = Static<typeof SttToken>;

/** New final tokens and the current non-final ones; `finished: true` on the session's last frame. */
export const SttResultFrame = Type.Object(
  {
    tokens: Type.Array(SttToken),
    final_audio_proc_ms: Type.Number(),
    total_audio_proc_ms: Type.Number(),
    finished: Type.Optional(Type.Literal(true)),
  },
  { additionalProperties: false },
);
export type SttResultFrame = Static<typeof SttResultFrame>;

export const SttErrorFrame = Type.Object(
  {
    tokens: Type.Tuple([]),
    error_code: Type.Integer(),
    error_type: Type.String(),
    error_message: Type.String(),
    more_info: Type.String(),
    request_id: Type.String(),
  },
  { additionalProperties: false },
);
export type SttErrorFrame = Static<typeof SttErrorFrame>;

export const SttServerFrame = Type.Union([SttResultFrame, SttErrorFrame]);
export type SttServerFrame = Static<typeof SttServerFrame>;

/** A server frame as a client reads it before telling the two apart: the error keys are present on an error frame. */
export type SttReceivedFrame = { tokens: SttToken[] } & Partial<Omit<SttResultFrame, 'tokens'>> & Partial<Omit<SttErrorFrame, 'tokens'>>;

export function sttErrorFrame(err: ApiError, requestId: string, referenceUrl: string): SttErrorFrame {
  return {
    tokens: [],
    error_code: err.status,
    error_type: err.type,
    error_message: err.message,
    more_info: moreInfoUrl(referenceUrl, err.type),
    request_id: requestId,
  };
}
