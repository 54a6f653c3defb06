import { Type } from '@sinclair/typebox';
import { ErrorBody } from '../../wire/schemas.js';

export const modelsSchema = {
  tags: ['models'],
  summary: 'List speech-to-text models (aliases included)',
  response: { 200: Type.Object({ models: Type.Array(Type.Object({}, { additionalProperties: true })) }), '4xx': ErrorBody, 500: ErrorBody },
};
