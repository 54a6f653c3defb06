import { Type } from '@sinclair/typebox';
import { ErrorBody } from '../../wire/schemas.js';

export const TemporaryKeyBody = Type.Object(
  {
    usage_type: Type.Union([Type.Literal('transcribe_websocket'), Type.Literal('tts_rt')]),
    expires_in_seconds: Type.Integer({ minimum: 1, maximum: 3600 }),
    client_reference_id: Type.Optional(Type.String({ maxLength: 256 })),
    single_use: Type.Optional(Type.Boolean()),
    max_session_duration_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 18000 })),
  },
  { additionalProperties: false },
);

export const TemporaryKeyResult = Type.Object({
  api_key: Type.String(),
  expires_at: Type.String({ format: 'date-time' }),
});

export const createTemporaryKeySchema = {
  tags: ['auth'],
  summary: 'Create a temporary API key for client-side real-time transcription or text-to-speech',
  body: TemporaryKeyBody,
  response: { 201: TemporaryKeyResult, '4xx': ErrorBody, 500: ErrorBody },
};
