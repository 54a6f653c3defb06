// Every message of /transcribe-websocket (docs/wire-compat.md, "Real-time STT WebSocket").
//
// Client messages: the first is the JSON configuration (a text frame); after it come audio (binary frames, or base64
// in text frames), control messages (JSON text frames with a `type`: finalize, keepalive) and the end of the stream
// (an empty text or binary frame). parseSttClientMessage turns one frame into a typed message or the error that ends
// the session. The configuration's fields are validated by the real-time service (modules/realtime/config.ts), which
// names the field that is wrong.
//
// Server frames are JSON text, never binary: result frames (tokens, processed audio, `finished` on the last one) and
// one error frame `{tokens: [], error_code, error_type, error_message, more_info, request_id}` before the server
// closes with 1000. error_code is the integer HTTP status, and result frames never carry error_code / error_message.
import { type Static, Type } from '@sinclair/typebox';
import { ApiError } from './api-error.js';
import { moreInfoUrl } from './error-catalog.js';

// ---- client → server ----

/**
 * The configuration message: the keys the service reads (spec table "Real-time transcription WebSocket" plus the
 * SDKs' keys). Unknown keys are allowed: a server that rejected them would fail SDK sessions.
 */
export const SttConfigMessage = Type.Object({
  api_key: Type.Optional(Type.String()),
  model: Type.String(),
  audio_format: Type.String(),
  sample_rate: Type.Optional(Type.Integer()),
  num_channels: Type.Optional(Type.Integer()),
  language_hints: Type.Optional(Type.Array(Type.String())),
  language_hints_strict: Type.Optional(Type.Boolean()),
  context: Type.Optional(Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown())])),
  enable_non_final_tokens: Type.Optional(Type.Boolean()),
  max_non_final_tokens_duration_ms: Type.Optional(Type.Number()),
  enable_endpoint_detection: Type.Optional(Type.Boolean()),
  max_endpoint_delay_ms: Type.Optional(Type.Number()),
  endpoint_sensitivity: Type.Optional(Type.Number()),
  endpoint_latency_adjustment_level: Type.Optional(Type.Integer()),
  enable_speaker_diarization: Type.Optional(Type.Boolean()),
  speakers: Type.Optional(Type.Array(Type.String())),
  enable_language_identification: Type.Optional(Type.Boolean()),
  enable_text_formatting: Type.Optional(Type.Boolean()),
  client_reference_id: Type.Optional(Type.String()),
  translation: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
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
  const m = msg && typeof msg === 'object' && !Array.isArray(msg) ? (msg as Record<string, unknown>) : undefined;
  const type = m?.type;
  if (type === 'keepalive') return ok({ type: 'keepalive' });
  if (type === 'finalize') {
    const trailing = m!.trailing_silence_ms;
    if (trailing === undefined || trailing === null) return ok({ type: 'finalize' });
    // Checked by hand: JSON.parse turns 1e400 into Infinity, which the schema's number would not reject.
    if (typeof trailing !== 'number' || !Number.isFinite(trailing) || trailing < 0) return invalid('trailing_silence_ms must be a non-negative number.');
    return ok({ type: 'finalize', trailing_silence_ms: trailing });
  }
  return invalid(`unknown control message type ${JSON.stringify(type ?? null)}; expected "finalize" or "keepalive".`);
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
