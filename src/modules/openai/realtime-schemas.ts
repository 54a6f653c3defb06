// Wire types of OpenAI Realtime transcription sessions (/v1/realtime), field names as in the official `openai` SDK
// (resources/realtime/realtime.d.ts): the client events we accept, GA (`session.update` with `type: "transcription"`)
// and beta (`transcription_session.update`), and the server events we send. Unknown fields are ignored (SDK versions
// add them); known fields of the wrong type or range are refused naming the field by its dotted location
// (parseClientEvent, through src/wire/validate.ts).
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ApiError } from '../../wire/api-error.js';
import { compileValidator, type Validator } from '../../wire/validate.js';
import { MAX_CONTEXT_CHARS } from '../realtime/config.js';
import { Keywords } from './schemas.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Loose = { additionalProperties: true } as const;
const EventId = Type.Optional(Type.String({ maxLength: 512 }));

export const AudioTranscription = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    language: Type.Optional(Nullable(Type.String({ maxLength: 16 }))),
    prompt: Type.Optional(Nullable(Type.String({ maxLength: MAX_CONTEXT_CHARS }))),
    keywords: Type.Optional(Nullable(Keywords)),
  },
  Loose,
);
export type AudioTranscription = Static<typeof AudioTranscription>;

export const ServerVad = Type.Object(
  {
    type: Type.Literal('server_vad'),
    threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    prefix_padding_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    silence_duration_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
    idle_timeout_ms: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    create_response: Type.Optional(Type.Boolean()),
    interrupt_response: Type.Optional(Type.Boolean()),
  },
  Loose,
);
export const SemanticVad = Type.Object(
  {
    type: Type.Literal('semantic_vad'),
    eagerness: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high'), Type.Literal('auto')])),
    create_response: Type.Optional(Type.Boolean()),
    interrupt_response: Type.Optional(Type.Boolean()),
  },
  Loose,
);
export const TurnDetection = Type.Union([ServerVad, SemanticVad]);
export type TurnDetection = Static<typeof TurnDetection>;

const NoiseReduction = Nullable(Type.Object({ type: Type.Optional(Type.Union([Type.Literal('near_field'), Type.Literal('far_field')])) }, Loose));
const Include = Type.Array(Type.Literal('item.input_audio_transcription.logprobs'), { maxItems: 1 });

/** GA audio formats (`audio.input.format`). */
export const AudioFormat = Type.Union([
  Type.Object({ type: Type.Literal('audio/pcm'), rate: Type.Optional(Type.Literal(24000)) }, Loose),
  Type.Object({ type: Type.Literal('audio/pcmu') }, Loose),
  Type.Object({ type: Type.Literal('audio/pcma') }, Loose),
]);
export type AudioFormat = Static<typeof AudioFormat>;

/** GA `session.update`: only transcription sessions are served (type "realtime" is refused by the session). */
export const GaSession = Type.Object(
  {
    type: Type.Union([Type.Literal('transcription'), Type.Literal('realtime')]),
    audio: Type.Optional(
      Type.Object(
        {
          input: Type.Optional(
            Type.Object(
              {
                format: Type.Optional(AudioFormat),
                transcription: Type.Optional(Nullable(AudioTranscription)),
                turn_detection: Type.Optional(Nullable(TurnDetection)),
                noise_reduction: Type.Optional(NoiseReduction),
              },
              Loose,
            ),
          ),
        },
        Loose,
      ),
    ),
    include: Type.Optional(Include),
  },
  Loose,
);
export type GaSession = Static<typeof GaSession>;

export const BETA_FORMATS = ['pcm16', 'g711_ulaw', 'g711_alaw'] as const;
export type BetaFormat = (typeof BETA_FORMATS)[number];

/** Beta `transcription_session.update` (header `OpenAI-Beta: realtime=v1`). */
export const BetaSession = Type.Object(
  {
    input_audio_format: Type.Optional(Type.Union(BETA_FORMATS.map((f) => Type.Literal(f)))),
    input_audio_transcription: Type.Optional(Nullable(AudioTranscription)),
    turn_detection: Type.Optional(Nullable(TurnDetection)),
    input_audio_noise_reduction: Type.Optional(NoiseReduction),
    include: Type.Optional(Include),
  },
  Loose,
);
export type BetaSession = Static<typeof BetaSession>;

const CLIENT_EVENTS = {
  'session.update': Type.Object({ type: Type.Literal('session.update'), event_id: EventId, session: GaSession }, Loose),
  'transcription_session.update': Type.Object({ type: Type.Literal('transcription_session.update'), event_id: EventId, session: BetaSession }, Loose),
  'input_audio_buffer.append': Type.Object({ type: Type.Literal('input_audio_buffer.append'), event_id: EventId, audio: Type.String() }, Loose),
  'input_audio_buffer.commit': Type.Object({ type: Type.Literal('input_audio_buffer.commit'), event_id: EventId }, Loose),
  'input_audio_buffer.clear': Type.Object({ type: Type.Literal('input_audio_buffer.clear'), event_id: EventId }, Loose),
};
type ClientEvents = typeof CLIENT_EVENTS;
export type ClientEvent = { [K in keyof ClientEvents]: Static<ClientEvents[K]> }[keyof ClientEvents];

/** Events of conversation sessions: known to OpenAI clients, not served by a transcription session. */
const CONVERSATION_EVENTS = new Set([
  'conversation.item.create',
  'conversation.item.delete',
  'conversation.item.retrieve',
  'conversation.item.truncate',
  'response.create',
  'response.cancel',
  'output_audio_buffer.clear',
]);

/** A client event that cannot be served: answered with an `error` event; the session goes on. */
export class ClientEventError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param: string | null,
    readonly eventId: string | null,
  ) {
    super(message);
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Each client event's schema, compiled once (src/wire/validate.ts). */
const CHECKS = Object.fromEntries(Object.entries(CLIENT_EVENTS).map(([type, schema]) => [type, compileValidator(schema, { root: 'event' })])) as {
  [K in keyof ClientEvents]: Validator<Static<ClientEvents[K]>>;
};

/** A refused field in the one style ("Invalid request: <dotted.location>: <message>"), `param` its location. */
export function fieldError(code: string, param: string, message: string, eventId: string | null): ClientEventError {
  return new ClientEventError(code, `Invalid request: ${param}: ${message}`, param, eventId);
}

/**
 * The one parser of client events: JSON text in, a typed event out, or ClientEventError naming what is wrong: OpenAI's
 * code (missing_required_parameter, invalid_value, ...) and `param`, the first bad field's dotted location; the message
 * names every bad field.
 */
export function parseClientEvent(text: string): ClientEvent {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    throw new ClientEventError('invalid_json', 'The event is not valid JSON.', null, null);
  }
  if (!isObj(msg)) throw new ClientEventError('invalid_event', 'The event must be a JSON object with a "type".', null, null);
  const eventId = typeof msg.event_id === 'string' ? msg.event_id : null;
  const type = msg.type;
  if (typeof type !== 'string') throw fieldError('missing_required_parameter', 'type', 'is required', eventId);
  if (CONVERSATION_EVENTS.has(type)) throw new ClientEventError('unsupported_event', `'${type}' is not available in a transcription session.`, 'type', eventId);
  if (!Object.prototype.hasOwnProperty.call(CHECKS, type))
    throw fieldError('invalid_value', 'type', `'${type.slice(0, 64)}' is not supported; must be one of ${Object.keys(CLIENT_EVENTS).join(', ')}`, eventId);
  const event = CHECKS[type as keyof ClientEvents].check(msg);
  if (event instanceof ApiError) {
    const first = event.validationErrors[0]!;
    throw new ClientEventError(first.error_type === 'missing' ? 'missing_required_parameter' : 'invalid_value', event.message, first.location, eventId);
  }
  return event;
}

// ---- Server events ----

export interface RealtimeErrorBody {
  type: string;
  code: string | null;
  message: string;
  param: string | null;
  event_id: string | null;
}

export type DurationUsage = { type: 'duration'; seconds: number };
export type LogProb = { token: string; logprob: number; bytes: number[] };

/** Server events, without the `event_id` every one of them gets when it is sent. */
export type ServerEvent =
  | { type: 'session.created' | 'session.updated'; session: Record<string, unknown> }
  | { type: 'transcription_session.created' | 'transcription_session.updated'; session: Record<string, unknown> }
  | { type: 'input_audio_buffer.speech_started'; audio_start_ms: number; item_id: string }
  | { type: 'input_audio_buffer.speech_stopped'; audio_end_ms: number; item_id: string }
  | { type: 'input_audio_buffer.committed'; item_id: string; previous_item_id: string | null }
  | { type: 'input_audio_buffer.cleared' }
  | { type: 'conversation.item.input_audio_transcription.delta'; item_id: string; content_index: 0; delta: string; logprobs?: LogProb[] }
  | {
      type: 'conversation.item.input_audio_transcription.completed';
      item_id: string;
      content_index: 0;
      transcript: string;
      usage: DurationUsage;
      logprobs?: LogProb[];
    }
  | { type: 'error'; error: RealtimeErrorBody };
