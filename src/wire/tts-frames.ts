// Every message of /tts-websocket, and the error body of POST /tts (docs/wire-compat.md, "TTS WebSocket").
//
// Client messages carry no type field: they are told apart by their keys (api_key → start, cancel → cancel,
// keep_alive → keep-alive, text / text_end → text). parseTtsClientMessage turns one text frame into a typed
// message or the connection-level error that closes the socket; fields are checked against their schemas
// (src/wire/validate.ts), errors naming them by dotted location. Problems that concern one stream only (its
// generation parameters, a text of the wrong type) are that stream's errors and are left to the session.
//
// Server frames are JSON text (audio in base64), always with the stream's id. Normal frames never carry error keys;
// a connection-level error frame has `stream_id: ""` in the spec profile and none in the soniox-sdk profile.
import { type Static, Type } from '@sinclair/typebox';
import { ApiError } from './api-error.js';
import type { CompatProfile } from './compat.js';
import { moreInfoUrl } from './error-catalog.js';
import { compileValidator } from './validate.js';

/** The longest stream_id accepted. */
export const MAX_STREAM_ID_LENGTH = 256;

// ---- client → server ----

const StreamId = Type.String({ minLength: 1, maxLength: MAX_STREAM_ID_LENGTH });

/**
 * A stream start's envelope: its id and the key (which may instead come with the handshake). Its generation
 * parameters are POST /tts's, with return_timestamps: TtsStartFields in modules/tts/request-config.ts, checked per
 * stream once the caller is authenticated (their errors are the stream's).
 */
export const TtsStartMessage = Type.Object({ stream_id: StreamId, api_key: Type.Optional(Type.String()) }, { additionalProperties: true });

/** Text of a stream; `text_end: true` ends it. */
export const TtsTextMessage = Type.Object({
  stream_id: StreamId,
  text: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  text_end: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
});

export const TtsCancelMessage = Type.Object({ stream_id: StreamId, cancel: Type.Literal(true) });

/** Accepted silently, never answered; no stream_id. */
export const TtsKeepAliveMessage = Type.Object({ keep_alive: Type.Literal(true) });

/** A client message once parsed: `type` says which of the four it is. */
export type TtsClientMessage =
  /** `body` is the whole message, checked by the TTS service (its errors are the stream's). */
  | { type: 'start'; stream_id: string; api_key: unknown; body: Record<string, unknown> }
  | { type: 'text'; stream_id: string; text: string; text_end: boolean }
  /** A text message whose text or text_end has the wrong type: an error of that stream. */
  | { type: 'text'; stream_id: string; error: ApiError }
  | { type: 'cancel'; stream_id: string }
  | { type: 'keep_alive' };

export type TtsParseResult = { ok: true; message: TtsClientMessage } | { ok: false; error: ApiError };

const TextFields = Type.Pick(TtsTextMessage, ['text', 'text_end']);
const textFields = compileValidator(TextFields, { root: 'message' });
const streamIdOf = compileValidator(Type.Object({ stream_id: StreamId }), { root: 'message' });

/**
 * One client text frame. `handshakeKey`: a key came with the handshake, so a start may omit api_key and is then
 * recognised by its model or voice.
 */
export function parseTtsClientMessage(data: string, handshakeKey: boolean): TtsParseResult {
  const fail = (message: string): TtsParseResult => ({ ok: false, error: new ApiError('invalid_request', `Invalid request: ${message}`) });
  let msg: unknown;
  try {
    msg = JSON.parse(data);
  } catch {
    return fail('malformed JSON message.');
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return fail('each message must be a JSON object.');
  const m = msg as Record<string, unknown>;
  let type: 'start' | 'cancel' | 'text';
  if ('api_key' in m || (handshakeKey && ('model' in m || 'voice' in m) && !('text' in m))) type = 'start';
  else if ('cancel' in m) type = 'cancel';
  else if ('keep_alive' in m) return { ok: true, message: { type: 'keep_alive' } };
  else if ('text' in m || 'text_end' in m) type = 'text';
  else return fail('unrecognized message: expected a stream start (api_key), text, text_end, cancel or keep_alive.');
  const envelope = streamIdOf.check(m);
  if (envelope instanceof ApiError) return { ok: false, error: envelope };
  const id = envelope.stream_id;
  if (type === 'start') return { ok: true, message: { type, stream_id: id, api_key: m.api_key, body: m } };
  if (type === 'cancel') return { ok: true, message: { type, stream_id: id } };
  const text = textFields.check(m);
  if (text instanceof ApiError) return { ok: true, message: { type, stream_id: id, error: text } };
  return { ok: true, message: { type, stream_id: id, text: text.text ?? '', text_end: text.text_end ?? false } };
}

// ---- server → client ----

/** Character timings of the audio in a frame, seconds from the start of the stream. */
export const TtsTimestamps = Type.Object(
  {
    characters: Type.Array(Type.String()),
    character_start_times_seconds: Type.Array(Type.Number()),
    character_end_times_seconds: Type.Array(Type.Number()),
  },
  { additionalProperties: false },
);
export type TtsTimestamps = Static<typeof TtsTimestamps>;

export const TtsAudioFrame = Type.Object(
  { stream_id: Type.String(), audio: Type.String({ contentEncoding: 'base64' }), timestamps: Type.Optional(TtsTimestamps) },
  { additionalProperties: false },
);
export type TtsAudioFrame = Static<typeof TtsAudioFrame>;

/** A spoken word and its time in the audio, in milliseconds from the start of the stream (or of the response's audio). */
export const TtsWordTimestamp = Type.Object(
  { text: Type.String(), start_ms: Type.Integer({ minimum: 0 }), end_ms: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
);
export type TtsWordTimestamp = Static<typeof TtsWordTimestamp>;

/**
 * Word times (a start with `word_timestamps: true`): sent just before the audio frame whose audio they describe, or
 * before audio_end for words whose audio is already out; words in order, times never going back.
 */
export const TtsWordTimestampsFrame = Type.Object({ stream_id: Type.String(), word_timestamps: Type.Array(TtsWordTimestamp) }, { additionalProperties: false });
export type TtsWordTimestampsFrame = Static<typeof TtsWordTimestampsFrame>;

/** The stream's audio is complete (never sent when the audio cap cut it). */
export const TtsAudioEndFrame = Type.Object(
  { stream_id: Type.String(), audio_end: Type.Literal(true), timestamps: Type.Optional(TtsTimestamps) },
  { additionalProperties: false },
);
export type TtsAudioEndFrame = Static<typeof TtsAudioEndFrame>;

/** The stream is over (after audio_end, a cancel, or an error that ended it). */
export const TtsTerminatedFrame = Type.Object({ stream_id: Type.String(), terminated: Type.Literal(true) }, { additionalProperties: false });
export type TtsTerminatedFrame = Static<typeof TtsTerminatedFrame>;

/** POST /tts's error body; error_code is the HTTP status. */
export const TtsErrorBody = Type.Object({
  error_code: Type.Integer(),
  error_type: Type.String(),
  error_message: Type.String(),
  more_info: Type.String(),
  request_id: Type.String(),
});
export type TtsErrorBody = Static<typeof TtsErrorBody>;

/** The error body with the stream's id ("" or absent for a connection-level error). */
export const TtsErrorFrame = Type.Object({ stream_id: Type.Optional(Type.String()), ...TtsErrorBody.properties }, { additionalProperties: false });
export type TtsErrorFrame = Static<typeof TtsErrorFrame>;

export const TtsServerFrame = Type.Union([TtsAudioFrame, TtsWordTimestampsFrame, TtsAudioEndFrame, TtsTerminatedFrame, TtsErrorFrame]);
export type TtsServerFrame = Static<typeof TtsServerFrame>;

export function ttsErrorBody(err: ApiError, requestId: string, referenceUrl: string): TtsErrorBody {
  return { error_code: err.status, error_type: err.type, error_message: err.message, more_info: moreInfoUrl(referenceUrl, err.type), request_id: requestId };
}

/** A per-stream error frame (`streamId` given) or a connection-level one (`streamId` null). */
export function ttsErrorFrame(err: ApiError, streamId: string | null, requestId: string, referenceUrl: string, profile: CompatProfile): TtsErrorFrame {
  const body = ttsErrorBody(err, requestId, referenceUrl);
  if (streamId !== null) return { stream_id: streamId, ...body };
  return profile === 'soniox-sdk' ? { ...body } : { stream_id: '', ...body };
}
