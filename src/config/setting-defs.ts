// The one table of settings. Every setting is read from (lowest to highest precedence): its default,
// the optional JSON config file, the environment, and CLI flags (settings.ts). README's settings table lists each
// one (a test checks that), so adding a setting here is the whole job.

export type Kind = 'string' | 'int' | 'number' | 'bool' | 'list' | 'enum';

export interface SettingDef<K extends Kind = Kind> {
  env: string;
  kind: K;
  default: unknown;
  doc: string;
  values?: readonly string[];
  min?: number;
}

const RATE_CATEGORIES = [
  'transcribe_websocket',
  'transcribe_async',
  'files',
  'tts',
  'temporary_api_key',
  'usage_logs',
  'models',
  'organization',
  'concurrency',
  'voices',
  'speakers',
] as const;
export type RateCategory = (typeof RATE_CATEGORIES)[number];
export const rateCategories: readonly RateCategory[] = RATE_CATEGORIES;

// Default requests per minute (organization, project). 0 disables a limit.
const RATE_DEFAULTS: Record<RateCategory, [number, number]> = {
  transcribe_websocket: [600, 300],
  transcribe_async: [12000, 6000], // polling: the SDK's wait() reads each job once a second
  files: [3000, 1500],
  tts: [1200, 600],
  temporary_api_key: [600, 300],
  usage_logs: [600, 300],
  models: [600, 300],
  organization: [600, 300], // organization administration endpoints
  concurrency: [600, 300], // concurrency report and concurrent-streams history
  voices: [600, 300],
  speakers: [600, 300],
};

function rateSettings(): Record<string, SettingDef> {
  const out: Record<string, SettingDef> = {};
  for (const cat of RATE_CATEGORIES) {
    const [org, project] = RATE_DEFAULTS[cat];
    const upper = cat.toUpperCase();
    out[`rate_${cat}_org`] = {
      env: `PARLANCE_RATE_${upper}_ORG_PER_MIN`,
      kind: 'int',
      min: 0,
      default: org,
      doc: `Requests per minute per organization for ${cat.replace(/_/g, ' ')} (0 = unlimited).`,
    };
    out[`rate_${cat}_project`] = {
      env: `PARLANCE_RATE_${upper}_PROJECT_PER_MIN`,
      kind: 'int',
      min: 0,
      default: project,
      doc: `Requests per minute per project for ${cat.replace(/_/g, ' ')} (0 = unlimited).`,
    };
  }
  return out;
}

export const settingDefs = {
  dataDir: { env: 'PARLANCE_DATA_DIR', kind: 'string', default: './.data', doc: 'Data directory: the SQLite database and uploaded files (blobs).' },
  modelsDir: {
    env: 'PARLANCE_MODELS_DIR',
    kind: 'string',
    default: '',
    doc: 'Models you bring (sherpa-onnx): one folder per model with a `parlance-model.json` manifest (see "Bring your own models"). Empty: `<data dir>/models`.',
  },
  host: { env: 'PARLANCE_HOST', kind: 'string', default: '0.0.0.0', doc: 'Address the HTTP/WebSocket server binds to.' },
  port: { env: 'PARLANCE_PORT', kind: 'int', min: 0, default: 8080, doc: 'Port of the main HTTP interface (0 picks a free port).' },
  role: {
    env: 'PARLANCE_ROLE',
    kind: 'enum',
    values: ['all', 'api', 'worker'] as const,
    default: 'all',
    doc: 'What this node runs (`--role`): `all` (everything); `api` (HTTP and WebSockets; the jobs it enqueues wait for a worker node); `worker` (async transcription, voice preparation and webhook delivery; its port answers only /health, /ready and /metrics). See "Running several nodes".',
  },
  shutdownDrainSeconds: {
    env: 'PARLANCE_SHUTDOWN_DRAIN_SECONDS',
    kind: 'number',
    min: 0,
    default: 8,
    doc: "On SIGTERM/SIGINT: how long live real-time sessions, TTS streams and HTTP requests may take to finish (final tokens, then the completion frame) before the server closes what is left and exits. Keep it below your supervisor's stop timeout (docker stop: 10 s). A second signal stops at once.",
  },
  publicUrl: {
    env: 'PARLANCE_PUBLIC_URL',
    kind: 'string',
    default: '',
    doc: 'Public base URL of this server, used in `more_info` links. Empty: derived from the listening address.',
  },
  errorReferenceUrl: {
    env: 'PARLANCE_ERROR_REFERENCE_URL',
    kind: 'string',
    default: '',
    doc: "Error reference page that `more_info` points at. Empty: this server's own `/docs/errors` page.",
  },
  compat: {
    env: 'PARLANCE_COMPAT',
    kind: 'enum',
    values: ['spec', 'soniox-sdk'] as const,
    default: 'spec',
    doc: "Wire profile: `spec` (service specification) or `soniox-sdk` (the official SDKs' status words and framing).",
  },
  environment: {
    env: 'PARLANCE_ENVIRONMENT',
    kind: 'string',
    default: 'production',
    doc: 'Environment this server serves; API keys issued for another environment are refused (401).',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    kind: 'string',
    default: '',
    doc: 'PostgreSQL connection URL (multi-node). Empty: embedded SQLite in the data directory.',
  },
  redisUrl: {
    env: 'REDIS_URL',
    kind: 'string',
    default: '',
    doc: 'Redis URL for shared rate-limit counters and concurrent-stream counts (multi-node). Empty: in-memory counters.',
  },
  blobStore: {
    env: 'PARLANCE_BLOB_STORE',
    kind: 'enum',
    values: ['local', 's3'],
    default: 'local',
    doc: 'Where uploaded files and voice clips live: `local` (the data directory) or `s3` (an S3-compatible bucket several nodes share; credentials from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`).',
  },
  s3Bucket: { env: 'PARLANCE_S3_BUCKET', kind: 'string', default: '', doc: 'With `PARLANCE_BLOB_STORE=s3`: the bucket (must exist; checked at start).' },
  s3Prefix: {
    env: 'PARLANCE_S3_PREFIX',
    kind: 'string',
    default: '',
    doc: 'With S3: prefix of every object key (e.g. `parlance/`), so one bucket can serve several installations.',
  },
  s3Endpoint: {
    env: 'PARLANCE_S3_ENDPOINT',
    kind: 'string',
    default: '',
    doc: 'With S3: URL of an S3-compatible server (MinIO, Ceph, Garage, ...). Empty: AWS S3 in `PARLANCE_S3_REGION`.',
  },
  s3Region: { env: 'PARLANCE_S3_REGION', kind: 'string', default: 'us-east-1', doc: "With S3: the bucket's region." },
  s3ForcePathStyle: {
    env: 'PARLANCE_S3_FORCE_PATH_STYLE',
    kind: 'bool',
    default: false,
    doc: 'With S3: address the bucket as `endpoint/bucket/key` instead of `bucket.endpoint/key` (most self-hosted S3-compatible servers need this).',
  },
  allowPrivateHosts: {
    env: 'PARLANCE_ALLOW_PRIVATE_HOSTS',
    kind: 'list',
    default: [],
    doc: 'Comma-separated hosts or CIDRs the SSRF guard lets through for `audio_url` downloads and webhooks (e.g. `127.0.0.1,10.0.0.0/8` for local development); a `webhook_url` on any other private address is refused when the transcription is created. Empty by default.',
  },
  metricsToken: {
    env: 'PARLANCE_METRICS_TOKEN',
    kind: 'string',
    default: '',
    doc: 'When set, `GET /metrics` answers only requests with `Authorization: Bearer <this token>` (401 otherwise). Empty: open to whoever reaches the port.',
  },
  logLevel: {
    env: 'PARLANCE_LOG_LEVEL',
    kind: 'enum',
    values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
    default: 'info',
    doc: 'Log level (JSON logs on stderr).',
  },
  trustProxy: { env: 'PARLANCE_TRUST_PROXY', kind: 'bool', default: false, doc: 'Trust X-Forwarded-* headers from a reverse proxy.' },
  jsonBodyLimitBytes: {
    env: 'PARLANCE_JSON_BODY_LIMIT_BYTES',
    kind: 'int',
    min: 1024,
    default: 1_048_576,
    doc: 'Largest JSON request body accepted.',
  },
  wsMaxMessageBytes: {
    env: 'PARLANCE_WS_MAX_MESSAGE_BYTES',
    kind: 'int',
    min: 1024,
    default: 4_194_304,
    doc: 'Largest WebSocket message accepted (bytes); a bigger one closes the connection.',
  },
  wsFirstMessageTimeoutSeconds: {
    env: 'PARLANCE_WS_FIRST_MESSAGE_TIMEOUT_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 20,
    doc: 'A WebSocket that sends no message this long after connecting gets a request_timeout error frame and is closed (the SDKs connect with a 20 s timeout and send their first message right after, or keepalives).',
  },
  wsPingIntervalSeconds: {
    env: 'PARLANCE_WS_PING_INTERVAL_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 20,
    doc: 'WebSocket ping interval; a client that misses a ping is disconnected and its resources freed.',
  },
  maxFileSizeBytes: {
    env: 'PARLANCE_MAX_FILE_SIZE_BYTES',
    kind: 'int',
    min: 1,
    default: 1_073_741_824,
    doc: 'Per-file upload limit in bytes (larger uploads get 400 `invalid_request`).',
  },
  filesTotalCountOrg: {
    env: 'PARLANCE_FILES_TOTAL_COUNT_ORG',
    kind: 'int',
    min: 0,
    default: 100_000,
    doc: 'Cap `files_total_count` per organization (0 = unlimited).',
  },
  filesTotalCountProject: {
    env: 'PARLANCE_FILES_TOTAL_COUNT_PROJECT',
    kind: 'int',
    min: 0,
    default: 50_000,
    doc: 'Cap `files_total_count` per project (0 = unlimited).',
  },
  filesTotalSizeGbOrg: {
    env: 'PARLANCE_FILES_TOTAL_SIZE_GB_ORG',
    kind: 'number',
    min: 0,
    default: 100,
    doc: 'Cap `files_total_size_gb` per organization, in GB of 10^9 bytes (0 = unlimited).',
  },
  filesTotalSizeGbProject: {
    env: 'PARLANCE_FILES_TOTAL_SIZE_GB_PROJECT',
    kind: 'number',
    min: 0,
    default: 50,
    doc: 'Cap `files_total_size_gb` per project, in GB of 10^9 bytes (0 = unlimited).',
  },
  jobQueue: {
    env: 'PARLANCE_JOB_QUEUE',
    kind: 'enum',
    values: ['local', 'pg-boss'] as const,
    default: 'local',
    doc: 'Job queue: `local` (durable, in this database; works on SQLite and PostgreSQL) or `pg-boss` (PostgreSQL only, for several nodes).',
  },
  jobLeaseSeconds: {
    env: 'PARLANCE_JOB_LEASE_SECONDS',
    kind: 'number',
    min: 0.5,
    default: 30,
    doc: "A running job is renewed while its node lives; a crashed node's jobs are taken over this long after its last renewal.",
  },
  housekeepingIntervalSeconds: {
    env: 'PARLANCE_HOUSEKEEPING_INTERVAL_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 3600,
    doc: 'How often expired temporary keys and transcripts past their retention window are purged.',
  },
  transcribeAsyncPendingNumFiles: {
    env: 'PARLANCE_TRANSCRIBE_ASYNC_PENDING_NUM_FILES',
    kind: 'int',
    min: 0,
    default: 1000,
    doc: 'Cap `transcribe_async_pending_num_files`: transcriptions of a project waiting or in progress (0 = unlimited).',
  },
  sttWorkers: {
    env: 'PARLANCE_STT_WORKERS',
    kind: 'int',
    min: 0,
    default: 0,
    doc: 'Speech-recognition worker threads for batch transcription (0 = one per CPU core).',
  },
  realtimeMaxStreams: {
    env: 'PARLANCE_REALTIME_MAX_STREAMS',
    kind: 'int',
    min: 0,
    default: 0,
    doc: 'Real-time STT sessions this node decodes at once per model, one streaming decoder each (0 = eight per CPU core). A session beyond it waits for a decoder up to the audio timeout, then gets `limit_exceeded`.',
  },
  realtimeWarmDecoders: {
    env: 'PARLANCE_REALTIME_WARM_DECODERS',
    kind: 'int',
    min: -1,
    default: -1,
    doc: 'Streaming decoders kept loaded and idle for new real-time sessions once real-time use began (about 75 MB each; loading one, a worker thread with the model and its 130k-word dictionary, is CPU a new session would otherwise wait for). -1: two per CPU core; 0: none.',
  },
  sttNarrowbandAdaptation: {
    env: 'PARLANCE_STT_NARROWBAND_ADAPTATION',
    kind: 'string',
    default: 'auto',
    doc: "Telephone (8 kHz) audio decoded with an acoustic-model adaptation for that channel, chosen per segment by its spectrum: `auto` uses the one `make setup` estimates for the default English model from Debian's real 8 kHz recordings (none if it was not built), `off` none, or the path of an MLLR transform (sphinxtrain's `mllr_solve` output) for every pocketsphinx model.",
  },
  sttPreload: {
    env: 'PARLANCE_STT_PRELOAD',
    kind: 'bool',
    default: true,
    doc: 'Load the speech models and a first warm real-time decoder before the server listens (about 2 s; more decoders keep loading in the background), so the first sessions and transcriptions do not wait for a model to load.',
  },
  textFormatting: {
    env: 'PARLANCE_TEXT_FORMATTING',
    kind: 'bool',
    default: true,
    doc: "Formatted transcripts by default (async transcripts and real-time final tokens): sentence capitals and punctuation, numbers, dates, times, money and percentages as digits. A request's `enable_text_formatting` overrides it.",
  },
  realtimeSecondPass: {
    env: 'PARLANCE_REALTIME_SECOND_PASS',
    kind: 'bool',
    default: true,
    doc: "Real-time final tokens from a second decoding of each utterance the way files are decoded (as accurate as async transcription; about 0.25 CPU seconds per second of speech, ahead of file work). false: the streaming decoder's own words, which are less accurate at the start of a session.",
  },
  realtimeSecondPassWaitMs: {
    env: 'PARLANCE_REALTIME_SECOND_PASS_WAIT_MS',
    kind: 'int',
    min: 0,
    default: 1500,
    doc: "Longest wait for an utterance's second pass after the streaming decoder closed it; a later one is dropped and the streaming words become final (counted in the session log). The second passes of all sessions also share a budget of 15 s of audio per STT worker, beyond which utterances keep their streaming words.",
  },
  realtimeSecondPassModel: {
    env: 'PARLANCE_REALTIME_SECOND_PASS_MODEL',
    kind: 'string',
    default: '',
    doc: 'An installed offline model (models directory, by id) that decodes each utterance of real-time sessions again for their final tokens, whichever model streams the partial results (built-in or a streaming model you bring); the same wait and budget rules apply. Empty: the offline model whose manifest says `"second_pass": true`, else the built-in second pass.',
  },
  transcriptionConcurrency: {
    env: 'PARLANCE_TRANSCRIPTION_CONCURRENCY',
    kind: 'int',
    min: 1,
    default: 8,
    doc: 'Async transcription jobs in progress at once per node (their audio segments share the STT workers fairly).',
  },
  asyncMaxAudioSeconds: {
    env: 'PARLANCE_ASYNC_MAX_AUDIO_SECONDS',
    kind: 'int',
    min: 1,
    default: 18_000,
    doc: 'Maximum audio duration of one async transcription; longer audio fails with `invalid_audio_file`.',
  },
  transcriptMaxTokens: {
    env: 'PARLANCE_TRANSCRIPT_MAX_TOKENS',
    kind: 'int',
    min: 1,
    default: 1_000_000,
    doc: 'Most tokens one transcript may hold; more fails the job with `transcription_output_too_long`.',
  },
  transcriptRetentionDays: {
    env: 'PARLANCE_TRANSCRIPT_RETENTION_DAYS',
    kind: 'number',
    min: 0,
    default: 0,
    doc: 'Days transcript data is kept after completion, then purged (reads give 409). 0 keeps it forever.',
  },
  downloadMaxBytes: {
    env: 'PARLANCE_DOWNLOAD_MAX_BYTES',
    kind: 'int',
    min: 1,
    default: 1_073_741_824,
    doc: 'Largest `audio_url` download accepted (bytes).',
  },
  downloadTimeoutMs: {
    env: 'PARLANCE_DOWNLOAD_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    default: 300_000,
    doc: 'Time limit for one `audio_url` download attempt (ms).',
  },
  webhookSigningSecret: {
    env: 'PARLANCE_WEBHOOK_SIGNING_SECRET',
    kind: 'string',
    default: '',
    doc: 'Standard Webhooks signing secret (`whsec_...`); when set, deliveries carry webhook-id/-timestamp/-signature headers.',
  },
  webhookTimeoutMs: {
    env: 'PARLANCE_WEBHOOK_TIMEOUT_MS',
    kind: 'int',
    min: 100,
    default: 10_000,
    doc: 'Time limit for one webhook delivery attempt (ms).',
  },
  webhookMaxAttempts: {
    env: 'PARLANCE_WEBHOOK_MAX_ATTEMPTS',
    kind: 'int',
    min: 1,
    default: 6,
    doc: 'Webhook delivery attempts (network errors and 5xx are retried with exponential backoff).',
  },
  webhookRetryBaseSeconds: {
    env: 'PARLANCE_WEBHOOK_RETRY_BASE_SECONDS',
    kind: 'number',
    min: 0.01,
    default: 5,
    doc: 'First webhook retry delay; later retries wait 6x, 24x, 120x and 360x this (5 s, 30 s, 2 min, 10 min, 30 min by default).',
  },
  sttModelAliases: {
    env: 'PARLANCE_STT_MODEL_ALIASES',
    kind: 'list',
    default: [
      'stt-async-v5=parlance-async-en-v1',
      'stt-async-v4=parlance-async-en-v1',
      'stt-async-v3=parlance-async-en-v1',
      'stt-async-preview=parlance-async-en-v1',
      'stt-rt-v5=parlance-rt-en-v1',
      'stt-rt-v4=parlance-rt-en-v1',
      'stt-rt-v3=parlance-rt-en-v1',
      'stt-rt-preview=parlance-rt-en-v1',
      // OpenAI's transcription model names, for clients of /v1/audio/transcriptions.
      'whisper-1=parlance-async-en-v1',
      'gpt-4o-transcribe=parlance-async-en-v1',
      'gpt-4o-mini-transcribe=parlance-async-en-v1',
    ],
    doc: "STT model aliases, `alias=model` pairs: public model ids that client code pins (the Soniox ids, and OpenAI's `whisper-1`, `gpt-4o-transcribe`, `gpt-4o-mini-transcribe` for `/v1/audio/transcriptions`), served by our models.",
  },
  openaiRealtimeModel: {
    env: 'PARLANCE_OPENAI_REALTIME_MODEL',
    kind: 'string',
    default: 'parlance-rt-en-v1',
    doc: 'Real-time model of OpenAI Realtime transcription sessions (`/v1/realtime`) whose transcription model is an OpenAI name (`whisper-1`, `gpt-4o-transcribe`, `gpt-4o-mini-transcribe`, ...); other names are our real-time model ids and aliases.',
  },
  realtimeAudioTimeoutSeconds: {
    env: 'PARLANCE_REALTIME_AUDIO_TIMEOUT_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 20,
    doc: 'Real-time STT `request_timeout`: no audio within this long of the configuration message (keepalives do not count before the first audio), or no audio (nor keepalive) for this long while streaming.',
  },
  realtimeMaxDurationSeconds: {
    env: 'PARLANCE_REALTIME_MAX_DURATION_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 3900,
    doc: 'Real-time STT session cap (`max_duration_reached`); the specification fixes 65 minutes, lower it only for testing.',
  },
  realtimeConcurrentStreamsOrg: {
    env: 'PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG',
    kind: 'int',
    min: 0,
    default: 100,
    doc: 'Concurrent real-time STT streams per organization, every node together when REDIS_URL is set (`limit_exceeded` beyond; 0 = unlimited; `parlance admin set-limits` overrides per organization).',
  },
  realtimeConcurrentStreamsProject: {
    env: 'PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT',
    kind: 'int',
    min: 0,
    default: 50,
    doc: 'Concurrent real-time STT streams per project, every node together when REDIS_URL is set (`limit_exceeded` beyond; 0 = unlimited; `parlance admin set-limits` overrides per project).',
  },
  realtimePartialIntervalMs: {
    env: 'PARLANCE_REALTIME_PARTIAL_INTERVAL_MS',
    kind: 'int',
    min: 20,
    default: 100,
    doc: 'Real-time STT: audio between two non-final results (ms). Lower gives earlier tokens for more CPU per stream.',
  },
  ttsModelAliases: {
    env: 'PARLANCE_TTS_MODEL_ALIASES',
    kind: 'list',
    default: ['tts-rt-v2=parlance-tts-v1', 'tts-rt-v1=parlance-tts-v1', 'tts-rt-v2=parlance-tts-espeak-v1', 'tts-rt-v1=parlance-tts-espeak-v1'],
    doc: 'TTS model aliases, `alias=model` pairs: public model ids that client code pins, served by our models. An alias listed twice takes the first model offered (parlance-tts-v1 needs flite and espeak-ng).',
  },
  ttsPort: {
    env: 'PARLANCE_TTS_PORT',
    kind: 'int',
    min: -1,
    default: -1,
    doc: 'Port of a separate text-to-speech interface (POST /tts, /tts-websocket, GET /v1/tts-models, /health), for a distinct TTS base URL as the SDKs configure it; -1: none (TTS is always served on the main port too); 0 picks a free port.',
  },
  wyomingPort: {
    env: 'PARLANCE_WYOMING_PORT',
    kind: 'int',
    min: -1,
    default: -1,
    doc: 'TCP port of the Wyoming protocol server (Home Assistant speech-to-text and text-to-speech, see "Home Assistant (Wyoming)"); -1: off; 0 picks a free port. Only nodes that serve the API listen.',
  },
  wyomingHost: {
    env: 'PARLANCE_WYOMING_HOST',
    kind: 'string',
    default: '127.0.0.1',
    doc: 'Address the Wyoming server binds to. Wyoming has no authentication: anyone who reaches the port uses the metered project, so it stays on loopback unless the network in between is trusted.',
  },
  wyomingProject: {
    env: 'PARLANCE_WYOMING_PROJECT',
    kind: 'string',
    default: '',
    doc: 'Project id the Wyoming requests are metered and budget-checked against. Empty: the first project of the first (bootstrap) organization. An unknown or deleted project stops the server from starting.',
  },
  wyomingMaxAudioSeconds: {
    env: 'PARLANCE_WYOMING_MAX_AUDIO_SECONDS',
    kind: 'int',
    min: 1,
    default: 300,
    doc: 'Wyoming speech-to-text: the longest utterance accepted (seconds of audio); longer audio gets an `error` event.',
  },
  ttsModels: {
    env: 'PARLANCE_TTS_MODELS',
    kind: 'list',
    default: [],
    doc: 'TTS models to offer, by id (e.g. `parlance-tts-espeak-v1,parlance-tts-flite-v1`). Empty: every model whose engine is installed. Enabling one later makes existing cloned voices `not_computed` for it.',
  },
  voiceMaxFileSizeBytes: {
    env: 'PARLANCE_VOICE_MAX_FILE_SIZE_BYTES',
    kind: 'int',
    min: 1,
    default: 10 * 1024 * 1024,
    doc: 'Largest cloned-voice reference clip upload in bytes (larger uploads get 400 `invalid_request`). The 2-minute duration limit is checked while the voice is prepared.',
  },
  voiceConcurrency: {
    env: 'PARLANCE_VOICE_CONCURRENCY',
    kind: 'int',
    min: 1,
    default: 2,
    doc: 'Cloned-voice preparation jobs (one per voice and TTS model) running at once per node.',
  },
  voiceProfileCacheDir: {
    env: 'PARLANCE_VOICE_PROFILE_CACHE_DIR',
    kind: 'string',
    default: '',
    doc: 'Where the measured profiles of built-in TTS voices (computed once per model, for cloned-voice matching) are cached. Empty: `<data dir>/voice-profiles`.',
  },
  speakerMaxFileSizeBytes: {
    env: 'PARLANCE_SPEAKER_MAX_FILE_SIZE_BYTES',
    kind: 'int',
    min: 1,
    default: 20 * 1024 * 1024,
    doc: 'Largest enrolment sample upload for an enrolled speaker, in bytes (larger uploads get 400 `invalid_request`). A sample longer than 5 minutes fails the profile with `speaker_invalid_audio`.',
  },
  speakersMaxPerProject: {
    env: 'PARLANCE_SPEAKERS_MAX_PER_PROJECT',
    kind: 'int',
    min: 0,
    default: 100,
    doc: 'Enrolled speakers one project may have; another gets 429 `limit_exceeded` (0 = unlimited).',
  },
  speakerSamplesMaxPerProject: {
    env: 'PARLANCE_SPEAKER_SAMPLES_MAX_PER_PROJECT',
    kind: 'int',
    min: 0,
    default: 1000,
    doc: 'Enrolment samples one project may hold across its speakers; another gets 429 `limit_exceeded` (0 = unlimited).',
  },
  speakerMinSpeechSeconds: {
    env: 'PARLANCE_SPEAKER_MIN_SPEECH_SECONDS',
    kind: 'number',
    min: 0.5,
    default: 10,
    doc: "Speech (voice activity, pauses excluded) an enrolled speaker's samples must hold together; less fails the profile with `speaker_audio_too_short`. See docs/benchmarks.md for how accuracy grows with it.",
  },
  speakerMatchMaxDistance: {
    env: 'PARLANCE_SPEAKER_MATCH_MAX_DISTANCE',
    kind: 'number',
    min: 0,
    default: 0.4,
    doc: "Recognising enrolled speakers on the diarizer's features (MFCC and pitch Gaussians): a diarized turn with 4 s of speech this close to an enrolled profile or closer is that speaker (shorter turns get proportionally more room, and the next-closest profile must be 1.4× as far); farther ones keep their numeric label. Lower: fewer false names, more voices left unknown (docs/benchmarks.md).",
  },
  speakerMatchMinSimilarity: {
    env: 'PARLANCE_SPEAKER_MATCH_MIN_SIMILARITY',
    kind: 'number',
    min: -1,
    default: 0.5,
    doc: 'Recognising enrolled speakers on speaker embeddings (with a `speaker-embedding` model installed): cosine similarity from which a diarized voice is an enrolled speaker. Higher: fewer false names.',
  },
  speakerConcurrency: {
    env: 'PARLANCE_SPEAKER_CONCURRENCY',
    kind: 'int',
    min: 1,
    default: 1,
    doc: 'Enrolled-speaker profile jobs running at once per node.',
  },
  ttsProcesses: {
    env: 'PARLANCE_TTS_PROCESSES',
    kind: 'int',
    min: 0,
    default: 0,
    doc: "Synthesizer processes (espeak-ng, flite, festival) this node runs at once, below the server's priority; more segments wait their turn (0 = one per CPU core).",
  },
  ttsMaxActive: {
    env: 'PARLANCE_TTS_MAX_ACTIVE',
    kind: 'int',
    min: 0,
    default: 0,
    doc: 'TTS requests and WebSocket streams this node serves at once (each from its start to its end); one more gets 429 `limit_exceeded` with `Retry-After` at once instead of waiting (0 = eight per synthesizer process).',
  },
  ttsMaxTextChars: {
    env: 'PARLANCE_TTS_MAX_TEXT_CHARS',
    kind: 'int',
    min: 1,
    default: 20_000,
    doc: 'Longest text one TTS request (HTTP) or stream (WebSocket) may send, in characters.',
  },
  ttsMaxAudioSeconds: {
    env: 'PARLANCE_TTS_MAX_AUDIO_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 120,
    doc: 'Generated audio per TTS request or stream (the specification fixes 2 minutes; lower it only for testing).',
  },
  ttsWsMaxStreams: {
    env: 'PARLANCE_TTS_WS_MAX_STREAMS',
    kind: 'int',
    min: 1,
    default: 5,
    doc: 'Simultaneous streams per TTS WebSocket connection; one more gets max_concurrent_streams_reached.',
  },
  ttsConcurrentOrg: {
    env: 'PARLANCE_TTS_CONCURRENT_ORG',
    kind: 'int',
    min: 0,
    default: 100,
    doc: 'Concurrent TTS requests (HTTP) and streams (WebSocket) per organization, every node together when REDIS_URL is set (`limit_exceeded` beyond; 0 = unlimited; `parlance admin set-limits` overrides).',
  },
  ttsConcurrentProject: {
    env: 'PARLANCE_TTS_CONCURRENT_PROJECT',
    kind: 'int',
    min: 0,
    default: 50,
    doc: 'Concurrent TTS requests (HTTP) and streams (WebSocket) per project, every node together when REDIS_URL is set (`limit_exceeded` beyond; 0 = unlimited; `parlance admin set-limits` overrides).',
  },
  concurrencyLeaseSeconds: {
    env: 'PARLANCE_CONCURRENCY_LEASE_SECONDS',
    kind: 'number',
    min: 1,
    default: 30,
    doc: "With Redis: lifetime of a stream's concurrency slot, renewed every third of it while the stream lives; a crashed node's slots come free after it.",
  },
  concurrencySampleSeconds: {
    env: 'PARLANCE_CONCURRENCY_SAMPLE_SECONDS',
    kind: 'number',
    min: 0.2,
    default: 5,
    doc: 'How often each node samples its concurrent streams per project for GET /v1/concurrent-streams-history (aggregated per minute).',
  },
  concurrencyHistoryRetentionDays: {
    env: 'PARLANCE_CONCURRENCY_HISTORY_RETENTION_DAYS',
    kind: 'int',
    min: 1,
    default: 400,
    doc: 'Days of concurrent-stream samples kept; older periods read as idle.',
  },
  ttsWsRequestTimeoutSeconds: {
    env: 'PARLANCE_TTS_WS_REQUEST_TIMEOUT_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 5,
    doc: 'TTS WebSocket request_timeout window: no text this long after a stream start, or between text chunks before text_end.',
  },
  usagePrices: {
    env: 'PARLANCE_USAGE_PRICES',
    kind: 'list',
    default: [
      'parlance-async-en-v1:input_audio_second=0.00003',
      'parlance-rt-en-v1:input_audio_second=0.00005',
      '*:input_character=0.00001',
      '*:output_audio_second=0.00002',
    ],
    doc: 'Price table in USD, `model:unit=price` entries; unit is `input_audio_second`, `input_character` or `output_audio_second`; model `*` prices every model without its own entry. `parlance admin set-price` overrides entries.',
  },
  usageCheckIntervalSeconds: {
    env: 'PARLANCE_USAGE_CHECK_INTERVAL_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 5,
    doc: 'How often a running real-time session re-checks balance and budgets with its cost so far (ended with a 402 frame when exhausted).',
  },
  translationEnabled: {
    env: 'PARLANCE_TRANSLATION_ENABLED',
    kind: 'bool',
    default: true,
    doc: 'Offer translation (async and real time) with the installed apertium pairs; false hides every pair.',
  },
  apertiumDataDir: {
    env: 'PARLANCE_APERTIUM_DATA_DIR',
    kind: 'string',
    default: '/usr/share/apertium',
    doc: 'Apertium data directory; its `modes/` lists the translation pairs, discovered at start-up (install `apertium-<pair>` packages and restart to add pairs).',
  },
  translationMaxProcesses: {
    env: 'PARLANCE_TRANSLATION_MAX_PROCESSES',
    kind: 'int',
    min: 1,
    default: 2,
    doc: 'Translation processes (apertium pipelines) running at once; further translations wait their turn.',
  },
  translationSpareIdleSeconds: {
    env: 'PARLANCE_TRANSLATION_SPARE_IDLE_SECONDS',
    kind: 'number',
    min: 0,
    default: 120,
    doc: 'Keep one loaded spare apertium process per recently used pair this long, hiding its start-up time (0 = none).',
  },
  translationTimeoutSeconds: {
    env: 'PARLANCE_TRANSLATION_TIMEOUT_SECONDS',
    kind: 'number',
    min: 0.1,
    default: 30,
    doc: 'Longest one translation call may run before it is killed (the job or session then fails with internal_error).',
  },
  ...rateSettings(),
} satisfies Record<string, SettingDef>;

type Defs = typeof settingDefs;
/** An enum setting is the union of its values (declared `as const`). */
type ValueOf<D> = D extends { kind: 'enum'; values: readonly (infer V extends string)[] }
  ? V
  : D extends { kind: 'int' | 'number' }
    ? number
    : D extends { kind: 'bool' }
      ? boolean
      : D extends { kind: 'list' }
        ? string[]
        : string;
export type Settings = { [K in keyof Defs]: ValueOf<Defs[K]> };
export type SettingKey = keyof Defs;
