// Cloned voices: creation from a staged reference clip, listing, counting, deletion, recompute, the per-model
// status derived from the TTS catalog (a model with no row is not_computed), and resolution of a voice id for
// speech (the hook TtsService calls). No HTTP types here; preparation itself runs in processor.ts.
import type { TtsModel, TtsVoice } from '../../engines/tts/model.js';
import type { TtsRegistry } from '../../engines/tts/registry.js';
import type { JobQueue } from '../../jobs/queue.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import { createdAfter, type CursorCodec, type Page, pageByCreated } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import { ClipStaging, type StagedUpload } from '../files/staging.js';
import type { ClonedVoiceStyle } from '../tts/request-config.js';
import type { VoiceAdaptation } from './cloning.js';
import { type VoiceModelRow, VoiceNameTaken, type VoiceRow, type VoicesRepository } from './repository.js';
import type { VoiceModelStatus, VoiceRecord } from './schemas.js';

export const PREPARE_JOB = 'voice.prepare';
export interface PrepareJobPayload {
  [key: string]: string;
  voice_id: string;
  model: string;
}

export const MAX_VOICE_NAME_LENGTH = 128;
export const MAX_VOICE_FILENAME_LENGTH = 256;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface VoicesServiceOptions {
  maxFileSizeBytes: number;
  clock?: Clock;
}

export class VoicesService {
  private readonly clock: Clock;
  /** Reference clips: staged within the size limit, then committed or discarded (routes stage through it). */
  readonly clips: ClipStaging;

  constructor(
    private readonly repo: VoicesRepository,
    private readonly blobs: BlobStore,
    private readonly cursors: CursorCodec,
    private readonly registry: TtsRegistry,
    private readonly queue: JobQueue,
    private readonly opts: VoicesServiceOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.clips = new ClipStaging(blobs, opts.maxFileSizeBytes, 'reference clip');
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  /** models[]: every catalog model, then every alias mirroring its model; no row = not_computed. */
  private modelEntries(rows: VoiceModelRow[]): VoiceModelStatus[] {
    const byModel = new Map(rows.map((r) => [r.model, r]));
    const entry = (id: string, modelId: string): VoiceModelStatus => {
      const r = byModel.get(modelId);
      const adaptation = r?.status === 'ready' && r.adaptation ? (JSON.parse(r.adaptation) as VoiceAdaptation) : undefined;
      return {
        model: id,
        status: r?.status ?? 'not_computed',
        error_type: r?.status === 'failed' ? r.error_type : null,
        error_message: r?.status === 'failed' ? r.error_message : null,
        base_voice: adaptation?.base_voice ?? null,
      };
    };
    const out = this.registry.models().map((m) => entry(m.id, m.id));
    for (const [alias, target] of this.registry.aliases) out.push(entry(alias, target));
    return out;
  }

  private toRecord(row: VoiceRow, models: VoiceModelRow[]): VoiceRecord {
    return { id: row.id, name: row.name, filename: row.filename, size: Number(row.size), created_at: row.created_at, models: this.modelEntries(models) };
  }

  private async record(row: VoiceRow): Promise<VoiceRecord> {
    return this.toRecord(row, await this.repo.models([row.id]));
  }

  /**
   * Store the clip and the voice, processing for every model of the catalog, with one preparation job per
   * model enqueued in the same transaction (201 at once; the clip's content is judged by the jobs).
   */
  async create(ctx: AuthContext, staged: StagedUpload, fields: { name?: string; filename?: string }): Promise<VoiceRecord> {
    try {
      const name = fields.name?.trim();
      if (name === undefined) throw invalidField('name', 'is required', 'missing');
      if (name.length === 0) throw invalidField('name', 'must not be empty', 'invalid_length');
      if (name.length > MAX_VOICE_NAME_LENGTH) throw invalidField('name', `must be at most ${MAX_VOICE_NAME_LENGTH} characters`, 'invalid_length');
      const filename = fields.filename || staged.partFilename || 'voice';
      if (filename.length > MAX_VOICE_FILENAME_LENGTH)
        throw invalidField('filename', `must be at most ${MAX_VOICE_FILENAME_LENGTH} characters`, 'invalid_length');
      const id = newId();
      const now = this.now();
      const row: VoiceRow = {
        id,
        organization_id: ctx.organizationId,
        project_id: ctx.projectId,
        name,
        filename,
        size: staged.size,
        blob_key: `voices/${ctx.projectId}/${id}`,
        reference_profile: null,
        created_at: now,
      };
      const models = this.registry.models().map((m) => m.id);
      const modelRows: VoiceModelRow[] = models.map((model) => ({
        voice_id: id,
        model,
        status: 'processing',
        error_type: null,
        error_message: null,
        adaptation: null,
        updated_at: now,
      }));
      // Bytes first, rows second: a row never points at missing bytes; refused rows take their bytes along.
      await this.clips.commit(staged, row.blob_key);
      try {
        await this.repo.insert(row, modelRows, async (tx) => {
          for (const model of models) await this.queue.enqueue<PrepareJobPayload>(PREPARE_JOB, { voice_id: id, model }, { tx, singletonKey: `${id}:${model}` });
        });
      } catch (err) {
        await this.blobs.remove(row.blob_key);
        if (err instanceof VoiceNameTaken) throw new ApiError('voice_name_conflict', `A voice named "${name}" already exists in this project.`);
        throw err;
      }
      return this.toRecord(row, modelRows);
    } finally {
      await this.clips.discard(staged);
    }
  }

  private async row(ctx: Pick<AuthContext, 'projectId'>, id: string): Promise<VoiceRow> {
    const row = UUID_RE.test(id) ? await this.repo.get(ctx.projectId, id.toLowerCase()) : undefined;
    if (!row) throw new ApiError('voice_not_found', `Voice ${id} not found.`);
    return row;
  }

  async get(ctx: AuthContext, id: string): Promise<VoiceRecord> {
    return this.record(await this.row(ctx, id));
  }

  async list(ctx: AuthContext, limit: number, cursor?: string): Promise<Page<VoiceRecord>> {
    const listName = `voices:${ctx.projectId}`;
    const after = createdAfter(this.cursors, cursor, listName);
    const page = pageByCreated(await this.repo.list(ctx.projectId, limit + 1, after), limit, this.cursors, listName);
    const models = await this.repo.models(page.items.map((r) => r.id));
    return {
      items: page.items.map((r) =>
        this.toRecord(
          r,
          models.filter((m) => m.voice_id === r.id),
        ),
      ),
      next_page_cursor: page.next_page_cursor,
    };
  }

  async count(ctx: AuthContext): Promise<{ total: number }> {
    return { total: await this.repo.count(ctx.projectId) };
  }

  /** Permanent: rows, then the clip. Jobs still queued for it find no voice and end. */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    if (!UUID_RE.test(id)) throw new ApiError('voice_not_found', `Voice ${id} not found.`);
    const row = await this.repo.delete(ctx.projectId, id.toLowerCase());
    if (!row) throw new ApiError('voice_not_found', `Voice ${id} not found.`);
    await this.blobs.remove(row.blob_key);
  }

  /**
   * not_computed → processing for one model (an id or alias) or for every catalog model. Models already
   * processing, ready or failed are left as they are: failed is terminal (create a new voice).
   */
  async recompute(ctx: AuthContext, id: string, model?: string | null): Promise<VoiceRecord> {
    const row = await this.row(ctx, id);
    let models: string[];
    if (model === undefined || model === null) models = this.registry.models().map((m) => m.id);
    else {
      const resolved = this.registry.resolve(model);
      if (!resolved) {
        const offered = [...this.registry.models().map((m) => m.id), ...this.registry.aliases.keys()];
        throw new ApiError('model_not_available', `TTS model "${model}" is not available. Available: ${offered.join(', ')}.`);
      }
      models = [resolved.id];
    }
    await this.repo.startModels(row.id, models, this.now(), async (tx, moved) => {
      for (const m of moved) await this.queue.enqueue<PrepareJobPayload>(PREPARE_JOB, { voice_id: row.id, model: m }, { tx, singletonKey: `${row.id}:${m}` });
    });
    return this.record(row);
  }

  /** TtsService's hook: a cloned voice's base voice and adaptation for `model`, or the spec's voice_* error. */
  async resolveForSpeech(projectId: string, voiceId: string, model: TtsModel): Promise<{ voice: TtsVoice; style: ClonedVoiceStyle }> {
    const row = await this.repo.get(projectId, voiceId);
    if (!row) throw new ApiError('voice_not_found', `Voice "${voiceId}" not found.`);
    const m = await this.repo.model(row.id, model.id);
    if (!m) throw new ApiError('voice_not_prepared', `Voice "${voiceId}" is not prepared for model ${model.id}: POST /v1/voices/${voiceId}/recompute first.`);
    if (m.status === 'processing')
      throw new ApiError('voice_not_ready', `Voice "${voiceId}" is still being prepared for model ${model.id}; retry shortly.`, {
        headers: { 'retry-after': '2' },
      });
    if (m.status === 'failed')
      throw new ApiError('voice_failed', `Voice "${voiceId}" failed preparation for model ${model.id} (${m.error_type ?? 'error'}); create a new voice.`);
    const a = JSON.parse(m.adaptation ?? '{}') as Partial<VoiceAdaptation>;
    const voice = model.voices.find((v) => v.id === a.base_voice);
    // The base voice vanished from the catalog (engine reinstalled without it): prepare again.
    if (!voice)
      throw new ApiError('voice_not_prepared', `Voice "${voiceId}" must be prepared again for model ${model.id}: its base voice is no longer installed.`);
    return { voice, style: { voiceId: row.id, pitchSemitones: a.pitch_semitones ?? 0, pitchRange: a.pitch_range ?? 1, rate: a.rate ?? 1 } };
  }
}
