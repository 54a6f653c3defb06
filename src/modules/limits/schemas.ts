import { Type } from '@sinclair/typebox';
import { ErrorBody } from '../../wire/schemas.js';

const Counts = (nullable: boolean) => {
  const n = nullable ? Type.Union([Type.Integer(), Type.Null()]) : Type.Integer();
  return Type.Object({ transcribe_concurrent: n, tts_concurrent: n });
};
const ScopeReport = Type.Object({ current: Counts(false), limits: Counts(true) });

export const ConcurrencyReport = Type.Object({ project: ScopeReport, organization: ScopeReport }, { $id: 'ConcurrencyReport' });

export const concurrencyLimitsSchema = {
  tags: ['concurrency'],
  summary: 'Current concurrent streams and their limits for the project and its organization (null: unlimited)',
  response: { 200: ConcurrencyReport, '4xx': ErrorBody, 500: ErrorBody },
};

export const HistoryQuery = Type.Object({
  start_time: Type.String({ maxLength: 64, description: 'ISO 8601 UTC, inclusive (filters period_start)' }),
  end_time: Type.String({ maxLength: 64, description: 'ISO 8601 UTC, exclusive, strictly after start_time' }),
  period_sec: Type.Integer({ description: '60, 3600 or 86400; 60 allows a window of at most 7 days' }),
  kind: Type.Union([Type.Literal('stt'), Type.Literal('tts')]),
});

export const HistoryEntry = Type.Object({
  period_start: Type.String({ format: 'date-time' }),
  period_sec: Type.Integer(),
  sample_min: Type.Integer(),
  sample_max: Type.Integer(),
  sample_sum: Type.Integer(),
  sample_count: Type.Integer(),
  total_count: Type.Integer(),
});

export const streamsHistorySchema = {
  tags: ['concurrency'],
  summary: 'Concurrent streams per period for the project: every period of the window, ascending, zeros when idle',
  querystring: HistoryQuery,
  response: { 200: Type.Object({ kind: Type.String(), entries: Type.Array(HistoryEntry) }), '4xx': ErrorBody, 500: ErrorBody },
};
