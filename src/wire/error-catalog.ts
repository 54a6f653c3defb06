// Every error_type of the service specification, one line each: HTTP status, the surfaces it may appear
// on, and a default message. Services throw ApiError with a type from here; each transport renders it.
export type Surface = 'rest' | 'async' | 'stt_ws' | 'tts_ws' | 'tts_http' | 'voice' | 'speaker' | 'model';

interface CatalogEntry {
  status: number;
  surfaces: readonly Surface[];
  message: string;
}

const ALL: readonly Surface[] = ['rest', 'async', 'stt_ws', 'tts_ws', 'tts_http', 'voice', 'speaker', 'model'];
const STREAMING: readonly Surface[] = ['stt_ws', 'tts_ws', 'tts_http'];

export const errorCatalog = {
  invalid_request: { status: 400, surfaces: ['rest', 'stt_ws', 'tts_ws', 'tts_http'], message: 'Invalid request.' },
  invalid_cursor: { status: 400, surfaces: ['rest'], message: 'Invalid cursor: pass next_page_cursor unchanged.' },
  model_not_available: { status: 400, surfaces: ['rest', 'async', ...STREAMING, 'model'], message: 'Model is not available.' },
  max_concurrent_streams_reached: { status: 400, surfaces: ['tts_ws'], message: 'Too many simultaneous streams on this connection.' },
  invalid_stream_state: { status: 400, surfaces: ['tts_ws'], message: "Message is not valid in the stream's current state." },
  invalid_audio_file: { status: 400, surfaces: ['rest', 'async'], message: 'Audio file could not be decoded.' },
  unauthenticated: { status: 401, surfaces: ['rest', 'stt_ws', 'tts_ws', 'tts_http'], message: 'Invalid or missing API key.' },
  permission_denied: { status: 403, surfaces: ALL, message: 'API key lacks the permission for this action.' },
  temp_api_key_session_expired: { status: 403, surfaces: STREAMING, message: "Session exceeded the temporary API key's maximum duration." },
  organization_balance_exhausted: { status: 402, surfaces: ['rest', 'async', ...STREAMING], message: 'Organization balance is exhausted.' },
  organization_monthly_budget_exhausted: { status: 402, surfaces: ['rest', 'async', ...STREAMING], message: 'Organization monthly budget is exhausted.' },
  project_monthly_budget_exhausted: { status: 402, surfaces: ['rest', 'async', ...STREAMING], message: 'Project monthly budget is exhausted.' },
  file_not_found: { status: 404, surfaces: ['rest', 'async'], message: 'File not found.' },
  transcription_not_found: { status: 404, surfaces: ['rest'], message: 'Transcription not found.' },
  voice_not_found: { status: 404, surfaces: ['rest', 'tts_ws', 'tts_http'], message: 'Voice not found.' },
  // Enrolled speakers (ours: the spec names the endpoints only).
  speaker_not_found: { status: 404, surfaces: ['rest', 'stt_ws'], message: 'Speaker not found.' },
  speaker_sample_not_found: { status: 404, surfaces: ['rest'], message: 'Enrolment sample not found.' },
  // Organization administration 404s: the spec lists 404 for an unknown project or key but names no type.
  project_not_found: { status: 404, surfaces: ['rest'], message: 'Project not found.' },
  api_key_not_found: { status: 404, surfaces: ['rest'], message: 'API key not found.' },
  // Models managed over HTTP (ours: /v1/admin/models).
  model_not_found: { status: 404, surfaces: ['rest'], message: 'No installed model or pull with this id.' },
  // REST: a request not received within PARLANCE_HTTP_REQUEST_TIMEOUT_SECONDS (headers or body trickled).
  request_timeout: { status: 408, surfaces: ['rest', ...STREAMING], message: 'Request timed out.' },
  voice_name_conflict: { status: 409, surfaces: ['rest'], message: 'A voice with this name already exists in the project.' },
  speaker_name_conflict: { status: 409, surfaces: ['rest'], message: 'A speaker with this name already exists in the project.' },
  speaker_not_ready: { status: 409, surfaces: ['rest', 'stt_ws'], message: 'Speaker has no ready profile (no audio, still processing, or failed).' },
  voice_not_prepared: { status: 409, surfaces: ['tts_ws', 'tts_http'], message: 'Voice is not prepared for this model.' },
  transcription_invalid_state: { status: 409, surfaces: ['rest'], message: 'Transcription is not in a state that allows this.' },
  // GET /v1/files/{id}/content with a Range past the end (ours: the download is an extension).
  range_not_satisfiable: { status: 416, surfaces: ['rest'], message: 'Requested range is not satisfiable.' },
  max_duration_reached: { status: 413, surfaces: ['stt_ws'], message: 'Maximum stream duration reached.' },
  max_audio_duration_reached: { status: 413, surfaces: ['tts_ws', 'tts_http'], message: 'Maximum generated audio duration reached.' },
  limit_exceeded: { status: 429, surfaces: ['rest', ...STREAMING], message: 'Limit exceeded.' },
  internal_error: { status: 500, surfaces: ALL, message: 'Internal server error.' },
  voice_not_ready: { status: 503, surfaces: ['tts_ws', 'tts_http'], message: 'Voice is still being prepared; retry later.' },
  voice_failed: { status: 503, surfaces: ['tts_ws', 'tts_http'], message: 'Voice preparation failed; create a new voice.' },
  // Types that only appear inside failed records. The spec shows no status; these are ours.
  file_download_blocked: { status: 400, surfaces: ['async', 'model'], message: 'Audio URL resolves to a blocked address.' },
  file_download_failed: { status: 400, surfaces: ['async', 'model'], message: 'Audio URL could not be fetched.' },
  transcription_output_too_long: { status: 400, surfaces: ['async'], message: 'Transcription output is too long.' },
  voice_audio_too_long: { status: 400, surfaces: ['voice'], message: 'Reference clip is longer than 2 minutes.' },
  voice_invalid_audio: { status: 400, surfaces: ['voice'], message: 'Reference clip is unsupported, corrupt or empty.' },
  speaker_audio_too_short: { status: 400, surfaces: ['speaker'], message: 'Enrolment samples hold too little speech for a profile.' },
  speaker_invalid_audio: { status: 400, surfaces: ['speaker'], message: 'An enrolment sample is unsupported, corrupt, empty or too long.' },
  // A failed model pull (ours): what it brought holds no model of the family and type, or the model does not load.
  invalid_model_archive: { status: 400, surfaces: ['model'], message: 'The source holds no usable model.' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorType = keyof typeof errorCatalog;

export function isErrorType(value: string): value is ErrorType {
  return Object.prototype.hasOwnProperty.call(errorCatalog, value);
}

/** `more_info`: reference address + '#' + error_type with underscores as hyphens. */
export function moreInfoUrl(referenceUrl: string, type: ErrorType): string {
  return `${referenceUrl}#${type.replace(/_/g, '-')}`;
}
