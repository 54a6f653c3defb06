// Async transcriptions: request rules, the records clients see, and the transitions the API itself makes
// (create → queued, delete, file deletion → failed). The worker's side lives in processor.ts.
import { speakerCountIssues } from '../../wire/word-controls.js';
import { controlsRecord, storedControls } from './controls.js';
import { maskUrlCredentials } from '../../lib/url-credentials.js';
import type { Kysely } from 'kysely';
import { type Clock, systemClock } from '../../lib/clock.js';
import { createdAfter, type CursorCodec, type Page, pageByCreated } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { JobQueue } from '../../jobs/queue.js';
import type { BlobStore } from '../../storage/blob-store.js';
import type { Database } from '../../storage/schema.js';
import { ApiError, type ValidationIssue } from '../../wire/api-error.js';
import { type CompatProfile, type TranscriptionStatus, wireTranscriptionStatus } from '../../wire/compat.js';
import type { AuthContext } from '../auth/service.js';
import type { BillingGuard } from '../billing/guard.js';
import type { FilesService } from '../files/service.js';
import type { ModelCatalog } from '../models/catalog.js';
import { unsupportedHints } from '../translation/plan.js';
import { privateWebhookTarget } from '../webhooks/private-target.js';
import type { TranscriptionRow, TranscriptionsRepository } from './repository.js';
import type { CreateTranscriptionBody, TranscriptionRecord, TranscriptToken } from './schemas.js';
import type { KnownSpeaker } from './speaker-labels.js';

export const PROCESS_JOB = 'transcription.process';
export const WEBHOOK_JOB = 'transcription.webhook';
const ACTIVE: readonly TranscriptionStatus[] = ['queued', 'downloading', 'transcribing'];
const MASK = '********';

export interface TranscriptionsOptions {
  profile: CompatProfile;
  /** Most transcriptions of a project waiting or in progress (`transcribe_async_pending_num_files`); 0 = no cap. */
  pendingCap: number;
  /** Format transcripts unless the request says otherwise (PARLANCE_TEXT_FORMATTING). */
  formatText: boolean;
  /** The SSRF guard's allowlist (PARLANCE_ALLOW_PRIVATE_HOSTS): webhooks it would refuse are refused at creation. */
  allowPrivateHosts: readonly string[];
  /** Checks the enrolled speakers a transcription asks for (404 speaker_not_found, 409 speaker_not_ready). */
  speakers?: { forRecognition(projectId: string, ids: readonly string[]): Promise<{ id: string }[]> };
  clock?: Clock;
}

export interface ProcessJobPayload {
  [key: string]: string;
  id: string;
}

export interface WebhookJobPayload {
  [key: string]: string;
  id: string;
  status: 'completed' | 'failed';
}

const parseJson = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** The record clients see; the auth header value and credentials in URLs never leave the server unmasked. */
export function toRecord(row: TranscriptionRow, profile: CompatProfile): TranscriptionRecord {
  return {
    id: row.id,
    status: wireTranscriptionStatus(row.status as TranscriptionStatus, profile),
    created_at: row.created_at,
    model: row.model,
    audio_url: maskUrlCredentials(row.audio_url),
    file_id: row.file_id,
    filename: row.filename,
    language_hints: JSON.parse(row.language_hints) as string[],
    language_hints_strict: row.language_hints_strict === 1,
    enable_speaker_diarization: row.enable_speaker_diarization === 1,
    ...(row.speakers ? { speakers: JSON.parse(row.speakers) as string[] } : {}),
    enable_language_identification: row.enable_language_identification === 1,
    ...(row.enable_multichannel === 1 ? { enable_multichannel: true } : {}),
    context: parseJson<string | Record<string, unknown>>(row.context),
    translation: parseJson<Record<string, unknown>>(row.translation),
    ...controlsRecord(row.controls),
    audio_duration_ms: row.audio_duration_ms,
    error_type: row.error_type,
    error_message: row.error_message,
    webhook_url: maskUrlCredentials(row.webhook_url),
    webhook_auth_header_name: row.webhook_auth_header_name,
    webhook_auth_header_value: row.webhook_auth_header_value === null ? null : MASK,
    webhook_status_code: row.webhook_status_code,
    client_reference_id: row.client_reference_id,
  };
}

/** A display name for audio fetched from a URL: the last path segment, else the host. */
export function filenameFromUrl(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop();
  let name = last ?? url.hostname;
  try {
    name = decodeURIComponent(name);
  } catch {
    // keep the raw segment
  }
  return name.slice(0, 256) || 'audio';
}

function httpUrl(value: string): URL | null {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : null;
  } catch {
    return null;
  }
}

export class TranscriptionsService {
  private readonly clock: Clock;

  constructor(
    private readonly repo: TranscriptionsRepository,
    private readonly files: FilesService,
    private readonly catalog: ModelCatalog,
    private readonly queue: JobQueue,
    private readonly billing: BillingGuard,
    private readonly cursors: CursorCodec,
    private readonly blobs: BlobStore,
    private readonly opts: TranscriptionsOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    // A still-queued job whose file is deleted fails with file_not_found (spec: States and transitions).
    files.onDeleted((projectId, fileId) => this.failQueuedForFile(projectId, fileId));
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /**
   * `known`: voices the request names for itself (the OpenAI surface's known speakers), recognised as enrolled
   * speakers are; kept on the row only until the job ends. They need enable_speaker_diarization.
   */
  async create(ctx: AuthContext, body: CreateTranscriptionBody, requestId: string, known: readonly KnownSpeaker[] = []): Promise<TranscriptionRecord> {
    const issues: ValidationIssue[] = [];
    const issue = (location: string, message: string, error_type = 'invalid_value') => issues.push({ error_type, location, message });

    const hasUrl = body.audio_url !== undefined;
    const hasFile = body.file_id !== undefined;
    if (hasUrl === hasFile) issue(hasUrl ? 'file_id' : 'audio_url', 'exactly one of audio_url and file_id is required', hasUrl ? 'conflict' : 'missing');
    const audioUrl = hasUrl ? httpUrl(body.audio_url!) : null;
    if (hasUrl && !audioUrl) issue('audio_url', 'must be an http or https URL', 'invalid_format');
    const webhookUrl = body.webhook_url === undefined ? null : httpUrl(body.webhook_url);
    if (body.webhook_url !== undefined && !webhookUrl) issue('webhook_url', 'must be an http or https URL', 'invalid_format');
    const privateTarget = webhookUrl && (await privateWebhookTarget(webhookUrl, this.opts.allowPrivateHosts));
    if (privateTarget) issue('webhook_url', privateTarget, 'invalid_value');
    if ((body.webhook_auth_header_name === undefined) !== (body.webhook_auth_header_value === undefined))
      issue(
        body.webhook_auth_header_name === undefined ? 'webhook_auth_header_name' : 'webhook_auth_header_value',
        'webhook_auth_header_name and webhook_auth_header_value go together',
        'missing',
      );
    if (body.webhook_auth_header_name !== undefined && body.webhook_url === undefined)
      issue('webhook_url', 'is required with a webhook auth header', 'missing');
    if (body.webhook_auth_header_name !== undefined && !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(body.webhook_auth_header_name))
      issue('webhook_auth_header_name', 'must be a valid HTTP header name', 'invalid_format');
    if (body.webhook_auth_header_value !== undefined && /[\r\n\0]/.test(body.webhook_auth_header_value))
      issue('webhook_auth_header_value', 'must not contain line breaks', 'invalid_format');

    const resolved = this.catalog.resolve(body.model, 'async');
    const languages = resolved.languages;
    // Hints are hints: a language no model recognises is ignored, unless the client asked for strict hints.
    if (body.language_hints_strict)
      for (const { index, language } of unsupportedHints(body.language_hints ?? [], languages, body.translation))
        issue(
          `language_hints.${index}`,
          `language "${language}" is not supported by model ${resolved.model.id} (supported: ${languages.join(', ')})`,
          'unsupported',
        );
    if (body.translation) {
      const plan = this.catalog.planTranslation(body.translation, resolved.model.id, languages);
      if (!plan.ok) issue('translation', plan.message, 'unsupported');
    }
    if (body.speakers?.length && !body.enable_speaker_diarization) issue('speakers', 'needs enable_speaker_diarization: true', 'invalid_value');
    for (const i of speakerCountIssues(body)) issue(i.location, i.message, i.errorType);
    if (known.length && !body.enable_speaker_diarization) issue('enable_speaker_diarization', 'must be true to recognise known speakers', 'invalid_value');
    if (issues.length)
      throw new ApiError('invalid_request', `Invalid request: ${issues.map((i) => `${i.location}: ${i.message}`).join('; ')}`, { validationErrors: issues });
    let speakers: string[] | null = null;
    if (body.speakers?.length) {
      if (!this.opts.speakers) throw new ApiError('invalid_request', 'Invalid request: speakers: speaker recognition is not available on this server.');
      speakers = (await this.opts.speakers.forRecognition(ctx.projectId, body.speakers)).map((s) => s.id);
    }

    let filename: string;
    if (hasFile) {
      const file = await this.files.getRow(ctx, body.file_id!);
      if (!file) throw new ApiError('file_not_found', `File ${body.file_id} not found.`);
      filename = file.filename;
    } else filename = filenameFromUrl(audioUrl!);

    await this.billing.assertCanStart(ctx.organizationId, ctx.projectId);
    if (this.opts.pendingCap > 0) {
      const pending = await this.repo.db
        .selectFrom('transcriptions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('project_id', '=', ctx.projectId)
        .where('status', 'in', [...ACTIVE])
        .executeTakeFirstOrThrow();
      if (Number(pending.n) >= this.opts.pendingCap)
        throw new ApiError(
          'limit_exceeded',
          `Limit exceeded: transcribe_async_pending_num_files (${this.opts.pendingCap} transcriptions waiting or in progress in the project).`,
        );
    }

    const now = this.now();
    const row: TranscriptionRow = {
      id: newId(),
      organization_id: ctx.organizationId,
      project_id: ctx.projectId,
      api_key_id: ctx.apiKeyId,
      source: ctx.source,
      request_id: requestId,
      model: body.model,
      resolved_model: resolved.model.id,
      status: 'queued',
      audio_url: hasUrl ? body.audio_url! : null,
      file_id: hasFile ? body.file_id! : null,
      filename,
      language_hints: JSON.stringify(body.language_hints ?? []),
      language_hints_strict: body.language_hints_strict ? 1 : 0,
      context: body.context === undefined ? null : JSON.stringify(body.context),
      translation: body.translation === undefined ? null : JSON.stringify(body.translation),
      enable_speaker_diarization: body.enable_speaker_diarization ? 1 : 0,
      speakers: speakers ? JSON.stringify(speakers) : null,
      controls: storedControls(body),
      known_speakers: known.length ? JSON.stringify(known) : null,
      enable_language_identification: body.enable_language_identification ? 1 : 0,
      enable_multichannel: body.enable_multichannel ? 1 : 0,
      audio_channels: null,
      enable_text_formatting: (body.enable_text_formatting ?? this.opts.formatText) ? 1 : 0,
      webhook_url: body.webhook_url ?? null,
      webhook_auth_header_name: body.webhook_auth_header_name ?? null,
      webhook_auth_header_value: body.webhook_auth_header_value ?? null,
      webhook_status_code: null,
      client_reference_id: body.client_reference_id ?? null,
      audio_duration_ms: 0,
      audio_blob_key: null,
      error_type: null,
      error_message: null,
      created_at: now,
      updated_at: now,
      completed_at: null,
      transcript_purged_at: null,
    };
    // The row and its job commit together: no queued job without a row, no queued row without a job.
    await this.repo.db.transaction().execute(async (tx) => {
      await this.repo.insert(row, tx);
      await this.queue.enqueue<ProcessJobPayload>(PROCESS_JOB, { id: row.id }, { tx, singletonKey: row.id });
    });
    return toRecord(row, this.opts.profile);
  }

  private async row(ctx: AuthContext, id: string): Promise<TranscriptionRow> {
    const row = await this.repo.get(ctx.projectId, id);
    if (!row) throw new ApiError('transcription_not_found', `Transcription ${id} not found.`);
    return row;
  }

  async get(ctx: AuthContext, id: string): Promise<TranscriptionRecord> {
    return toRecord(await this.row(ctx, id), this.opts.profile);
  }

  async list(ctx: AuthContext, limit: number, cursor?: string): Promise<Page<TranscriptionRecord>> {
    const listName = `transcriptions:${ctx.projectId}`;
    const after = createdAfter(this.cursors, cursor, listName);
    const page = pageByCreated(await this.repo.list(ctx.projectId, limit + 1, after), limit, this.cursors, listName);
    return { items: page.items.map((r) => toRecord(r, this.opts.profile)), next_page_cursor: page.next_page_cursor };
  }

  async count(ctx: AuthContext): Promise<{ playground: number; public_api: number; total: number }> {
    const by = await this.repo.countBySource(ctx.projectId);
    const playground = by.playground ?? 0;
    const public_api = by.public_api ?? 0;
    return { playground, public_api, total: playground + public_api };
  }

  async transcript(ctx: AuthContext, id: string): Promise<{ id: string; text: string; tokens: TranscriptToken[] }> {
    const row = await this.row(ctx, id);
    const status = row.status as TranscriptionStatus;
    if (status !== 'completed')
      throw new ApiError(
        'transcription_invalid_state',
        status === 'failed'
          ? `Transcription ${id} failed; it has no transcript.`
          : `Transcription ${id} is ${wireTranscriptionStatus(status, this.opts.profile)}; the transcript is not ready.`,
      );
    if (row.transcript_purged_at) throw new ApiError('transcription_invalid_state', `The transcript of ${id} was purged after its retention window.`);
    const t = await this.repo.getTranscript(id);
    if (!t) throw new ApiError('transcription_invalid_state', `The transcript of ${id} is no longer available.`);
    return { id, text: t.text, tokens: JSON.parse(t.tokens) as TranscriptToken[] };
  }

  async delete(ctx: AuthContext, id: string): Promise<void> {
    const r = await this.repo.deleteUnlessTranscribing(ctx.projectId, id);
    if (r === undefined) throw new ApiError('transcription_not_found', `Transcription ${id} not found.`);
    if (r === 'transcribing') throw new ApiError('transcription_invalid_state', `Transcription ${id} is being transcribed; delete it once it has finished.`);
    if (r.audio_blob_key) await this.blobs.remove(r.audio_blob_key);
  }

  /** Fail a job and schedule its webhook, in one transaction. False when it was already terminal. */
  async fail(id: string, from: readonly TranscriptionStatus[], errorType: string, message: string): Promise<boolean> {
    const row = await this.repo.getById(id);
    const done = await this.repo.db.transaction().execute(async (tx) => {
      const ended = { error_type: errorType, error_message: message, completed_at: this.now(), known_speakers: null };
      const moved = await this.repo.transition(id, from, 'failed', ended, this.now(), tx);
      if (moved && row?.webhook_url) await this.enqueueWebhook(tx, id, 'failed');
      return moved;
    });
    if (done && row?.audio_blob_key) await this.blobs.remove(row.audio_blob_key);
    return done;
  }

  async enqueueWebhook(tx: Kysely<Database>, id: string, status: 'completed' | 'failed'): Promise<void> {
    await this.queue.enqueue<WebhookJobPayload>(WEBHOOK_JOB, { id, status }, { tx, singletonKey: id });
  }

  private async failQueuedForFile(projectId: string, fileId: string): Promise<void> {
    for (const row of await this.repo.queuedForFile(fileId)) {
      if (row.project_id !== projectId) continue;
      await this.fail(row.id, ['queued'], 'file_not_found', `File ${fileId} was deleted before the transcription started.`);
    }
  }

  /** Housekeeping: purge transcript data past the retention window. */
  async purgeExpired(retentionDays: number): Promise<number> {
    if (retentionDays <= 0) return 0;
    const before = new Date(this.clock.now().getTime() - retentionDays * 86_400_000).toISOString();
    let total = 0;
    for (let n = 1; n > 0; total += n) n = await this.repo.purgeTranscripts(before, this.now());
    return total;
  }
}
