// Row types shared by both dialects. Timestamps are ISO-8601 UTC strings with milliseconds (they sort as
// text in both SQLite and PostgreSQL); booleans are 0/1 integers (better-sqlite3 cannot bind booleans).
import type { Generated } from 'kysely';

export type Flag = 0 | 1;

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
  available_balance_usd: Generated<string>;
  free_balance_usd: Generated<string>;
  used_balance_usd: Generated<string>;
  invoice_billing_enabled: Generated<Flag>;
  autopay_enabled: Generated<Flag>;
  autopay_threshold_usd: string | null;
  autopay_amount_usd: string | null;
  has_payment_method: Generated<Flag>;
  has_payment_error: Generated<Flag>;
  monthly_budget_usd: string | null;
  monthly_budget_notification_usd: string | null;
}

export interface ProjectsTable {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  region: string;
  created_at: string;
  deleted_at: string | null;
  monthly_budget_usd: string | null;
  monthly_budget_notification_usd: string | null;
}

export interface ApiKeysTable {
  id: string;
  organization_id: string;
  project_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  permissions: string; // JSON array of permission strings
  environment: string;
  source: string; // 'public_api' | 'playground'
  created_at: string;
  created_by: string;
  created_by_key_id: string | null;
  revoked_at: string | null;
}

export interface TemporaryApiKeysTable {
  id: string;
  organization_id: string;
  project_id: string;
  api_key_id: string;
  key_prefix: string;
  key_hash: string;
  usage_type: string;
  expires_at: string;
  single_use: Flag;
  consumed_at: string | null;
  max_session_duration_seconds: number | null;
  client_reference_id: string | null;
  created_at: string;
  /** 'public_api' | 'playground': the source of the credential that issued the key. */
  source: string;
}

export interface FilesTable {
  id: string;
  organization_id: string;
  project_id: string;
  filename: string;
  size: number;
  client_reference_id: string | null;
  source: string;
  blob_key: string;
  duration_ms: number | null;
  format: string | null;
  created_at: string;
}

export interface FileUsageTable {
  project_id: string;
  organization_id: string;
  source: string;
  files: number;
  bytes: number;
}

export interface TranscriptionsTable {
  id: string;
  organization_id: string;
  project_id: string;
  api_key_id: string;
  source: string;
  request_id: string;
  model: string;
  resolved_model: string;
  status: string;
  audio_url: string | null;
  file_id: string | null;
  filename: string;
  language_hints: string;
  language_hints_strict: Flag;
  context: string | null;
  translation: string | null;
  enable_speaker_diarization: Flag;
  enable_language_identification: Flag;
  /** Format the transcript (src/text): decided at creation. */
  enable_text_formatting: Flag;
  /** JSON array of enrolled speaker ids to recognise, or null. */
  speakers: string | null;
  /** JSON object of the transcript controls asked for (TranscriptControls), or null. */
  controls: string | null;
  /** Recognise each channel of the audio on its own (`enable_multichannel`): decided at creation. */
  enable_multichannel: Flag;
  /** Channels of the audio, found when the job read it (multichannel jobs only), else null. */
  audio_channels: number | null;
  /** JSON array of the voices the request named for itself ({name, print}) while its job runs; null otherwise. */
  known_speakers: string | null;
  webhook_url: string | null;
  webhook_auth_header_name: string | null;
  webhook_auth_header_value: string | null;
  webhook_status_code: number | null;
  client_reference_id: string | null;
  audio_duration_ms: number;
  audio_blob_key: string | null;
  error_type: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  transcript_purged_at: string | null;
}

export interface TranscriptsTable {
  transcription_id: string;
  text: string;
  tokens: string;
}

export interface JobsTable {
  id: string;
  kind: string;
  payload: string; // JSON
  state: 'queued' | 'running' | 'completed' | 'failed';
  attempt: Generated<number>;
  max_attempts: number | null;
  recoveries: Generated<number>;
  run_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  singleton_key: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface InstanceSettingsTable {
  key: string;
  value: string;
}

export interface ConcurrencyLimitsTable {
  scope: 'organization' | 'project';
  scope_id: string;
  kind: 'stt' | 'tts';
  max_streams: number | null;
  updated_at: string;
}

export interface ConcurrentStreamSamplesTable {
  project_id: string;
  organization_id: string;
  kind: 'stt' | 'tts';
  minute_start: string;
  node_id: string;
  sample_min: number;
  sample_max: number;
  sample_sum: number;
  sample_count: number;
}

export interface VoicesTable {
  id: string;
  organization_id: string;
  project_id: string;
  name: string;
  filename: string;
  size: number;
  blob_key: string;
  reference_profile: string | null;
  created_at: string;
}

export interface VoiceModelsTable {
  voice_id: string;
  model: string;
  status: 'processing' | 'ready' | 'failed';
  error_type: string | null;
  error_message: string | null;
  adaptation: string | null;
  updated_at: string;
}

export interface SpeakersTable {
  id: string;
  organization_id: string;
  project_id: string;
  name: string;
  metadata: string | null;
  status: 'no_samples' | 'processing' | 'ready' | 'failed';
  revision: number;
  error_type: string | null;
  error_message: string | null;
  profile: string | null;
  speech_ms: number | null;
  created_at: string;
  updated_at: string;
}

export interface SpeakerSamplesTable {
  id: string;
  speaker_id: string;
  organization_id: string;
  project_id: string;
  api_key_id: string | null;
  source: string;
  request_id: string;
  filename: string;
  size: number;
  blob_key: string;
  print: string | null;
  speech_ms: number | null;
  created_at: string;
}

/** Money columns are integer nano-USD (1e-9 USD). */
export interface UsageRecordsTable {
  id: string;
  organization_id: string;
  project_id: string;
  api_key_id: string | null;
  source: string;
  kind: string;
  request_id: string;
  client_reference_id: string | null;
  model: string;
  start_time: string;
  end_time: string;
  duration_ms: number;
  input_text_tokens: number;
  input_audio_tokens: number;
  input_audio_duration_ms: number;
  output_text_tokens: number;
  output_audio_tokens: number;
  output_audio_duration_ms: number;
  input_text_cost_nusd: number;
  input_audio_cost_nusd: number;
  output_text_cost_nusd: number;
  output_audio_cost_nusd: number;
  cost_nusd: number;
  free_nusd: number;
  invoiced_nusd: number;
}

export interface UsageMonthlyTable {
  project_id: string;
  organization_id: string;
  month: string;
  source: string;
  cost_nusd: number;
  free_nusd: number;
  invoiced_nusd: number;
}

export interface BudgetNotificationsTable {
  scope: string;
  scope_id: string;
  month: string;
  notified_at: string;
}

export interface UsagePricesTable {
  model: string;
  unit: string;
  price_usd: string;
  updated_at: string;
}

export interface PendingBlobDeletionsTable {
  blob_key: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
}

/** A model brought over HTTP and how its pull went (modules/models/records.ts). */
export interface ModelsTable {
  id: string;
  source: string;
  /** JSON: the resolved source the pull job works from. */
  plan: string;
  family: string;
  type: string;
  status: string;
  bytes_received: number | null;
  bytes_total: number | null;
  size_bytes: number | null;
  sha256: string | null;
  error_type: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
}

export interface Database {
  organizations: OrganizationsTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  temporary_api_keys: TemporaryApiKeysTable;
  files: FilesTable;
  file_usage: FileUsageTable;
  transcriptions: TranscriptionsTable;
  transcripts: TranscriptsTable;
  instance_settings: InstanceSettingsTable;
  jobs: JobsTable;
  concurrency_limits: ConcurrencyLimitsTable;
  concurrent_stream_samples: ConcurrentStreamSamplesTable;
  voices: VoicesTable;
  voice_models: VoiceModelsTable;
  speakers: SpeakersTable;
  speaker_samples: SpeakerSamplesTable;
  usage_records: UsageRecordsTable;
  usage_monthly: UsageMonthlyTable;
  budget_notifications: BudgetNotificationsTable;
  usage_prices: UsagePricesTable;
  pending_blob_deletions: PendingBlobDeletionsTable;
  models: ModelsTable;
}
