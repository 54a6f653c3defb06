// Wire shapes of the usage endpoints (the spec's Monthly usage and Balance; the rest as the SDK reads them,
// docs/wire-compat.md, "REST conventions").
import { type Static, Type } from '@sinclair/typebox';
import { ErrorBody } from '../../wire/schemas.js';

const Usd = Type.String({ description: 'USD amount as a decimal string' });
const NullableUsd = Type.Union([Type.String(), Type.Null()]);
const errors = { '4xx': ErrorBody, 500: ErrorBody };

export const MonthlyUsage = Type.Object({
  month: Type.String(),
  usage_usd: Usd,
  free_usage_usd: Usd,
  invoiced_usage_usd: Usd,
  api_usage_usd: Usd,
  playground_usage_usd: Usd,
  monthly_budget_usd: NullableUsd,
  monthly_budget_notification_usd: NullableUsd,
  remaining_budget_usd: NullableUsd,
  budget_exhausted: Type.Union([Type.Boolean(), Type.Null()]),
  projects: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      usage_usd: Usd,
      free_usage_usd: Usd,
      invoiced_usage_usd: Usd,
      api_usage_usd: Usd,
      playground_usage_usd: Usd,
      monthly_budget_usd: NullableUsd,
    }),
  ),
});
export type MonthlyUsage = Static<typeof MonthlyUsage>;

export const Balance = Type.Object({
  available_balance_usd: Usd,
  free_balance_usd: Usd,
  used_balance_usd: Usd,
  invoice_billing_enabled: Type.Boolean(),
  balance_exhausted: Type.Boolean(),
  autopay_enabled: Type.Boolean(),
  autopay_threshold_usd: NullableUsd,
  autopay_amount_usd: NullableUsd,
  has_payment_method: Type.Boolean(),
  has_payment_error: Type.Boolean(),
});
export type Balance = Static<typeof Balance>;

export const UsageLog = Type.Object({
  uuid: Type.String(),
  request_id: Type.String(),
  request_scope: Type.String(),
  client_reference_id: Type.Union([Type.String(), Type.Null()]),
  model: Type.String(),
  start_time: Type.String(),
  end_time: Type.String(),
  input_text_tokens: Type.Integer(),
  input_audio_tokens: Type.Integer(),
  input_audio_duration_ms: Type.Integer(),
  output_text_tokens: Type.Integer(),
  output_audio_tokens: Type.Integer(),
  output_audio_duration_ms: Type.Integer(),
  cost_usd: Usd,
  input_cost_usd: Usd,
  input_text_cost_usd: Usd,
  input_audio_cost_usd: Usd,
  output_cost_usd: Usd,
  output_text_cost_usd: Usd,
  output_audio_cost_usd: Usd,
});
export type UsageLog = Static<typeof UsageLog>;

export const SummaryEntry = Type.Object({
  model: Type.Union([Type.String(), Type.Null()]),
  days: Type.Array(Type.String()),
  total_cost_usd: Usd,
  total_input_cost_usd: Usd,
  total_output_cost_usd: Usd,
  total_duration_cost_usd: Usd,
  cost_usd: Type.Array(Usd),
  input_cost_usd: Type.Array(Usd),
  output_cost_usd: Type.Array(Usd),
  duration_cost_usd: Type.Array(Usd),
  total_num_requests: Type.Integer(),
  total_input_text_tokens: Type.Integer(),
  total_input_audio_tokens: Type.Integer(),
  total_input_audio_duration_ms: Type.Integer(),
  total_output_text_tokens: Type.Integer(),
  total_output_audio_tokens: Type.Integer(),
  total_output_audio_duration_ms: Type.Integer(),
  total_duration_ms: Type.Integer(),
  num_requests: Type.Array(Type.Integer()),
  input_text_tokens: Type.Array(Type.Integer()),
  input_audio_tokens: Type.Array(Type.Integer()),
  input_audio_duration_ms: Type.Array(Type.Integer()),
  output_text_tokens: Type.Array(Type.Integer()),
  output_audio_tokens: Type.Array(Type.Integer()),
  output_audio_duration_ms: Type.Array(Type.Integer()),
  duration_ms: Type.Array(Type.Integer()),
});
export type SummaryEntry = Static<typeof SummaryEntry>;

// The service validates the query itself (required times, end after start, limit, sort, cursor) so each
// failure gets its validation_errors entry; the schemas here document the parameters.
const Window = {
  start_time: Type.Optional(Type.String({ description: 'ISO-8601 UTC, inclusive (on request end time)' })),
  end_time: Type.Optional(Type.String({ description: 'ISO-8601 UTC, exclusive; strictly after start_time' })),
};

export const monthlyUsageSchema = {
  tags: ['organization'],
  summary: 'Usage of a calendar month (UTC), per project, with the current budget',
  querystring: Type.Object({ month: Type.Optional(Type.String({ description: 'YYYY-MM; default the current month' })) }),
  response: { 200: MonthlyUsage, ...errors },
};

export const balanceSchema = {
  tags: ['organization'],
  summary: 'Prepaid balance, billing mode and payment flags',
  response: { 200: Balance, ...errors },
};

export const usageLogsSchema = {
  tags: ['usage'],
  summary: "Usage records of the key's project, by request end time",
  querystring: Type.Object({
    ...Window,
    limit: Type.Optional(Type.String({ description: '1 to 1000, default 1000' })),
    sort: Type.Optional(Type.String({ description: 'end_time_asc (default) or end_time_desc' })),
    cursor: Type.Optional(Type.String()),
  }),
  response: { 200: Type.Object({ usage_logs: Type.Array(UsageLog), next_page_cursor: Type.Union([Type.String(), Type.Null()]) }), ...errors },
};

export const UsageSummary = Type.Object({ total: SummaryEntry, models: Type.Array(SummaryEntry) });
export type UsageSummary = Static<typeof UsageSummary>;

export const usageSummarySchema = {
  tags: ['usage'],
  summary: 'Usage per UTC day (at most 366 days), in total and per model',
  querystring: Type.Object(Window),
  response: { 200: UsageSummary, ...errors },
};
