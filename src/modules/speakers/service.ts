// Enrolled speakers: creation by name, listing, deletion (rows, samples' audio and the profile), enrolment samples
// (an uploaded part or a copy of an uploaded file), and resolving ids for recognition (the hook transcriptions and
// real-time sessions call). Every change to a speaker's samples enqueues its profile job, which runs in processor.ts.
// Caps: speakers and samples per project, 429 limit_exceeded naming the cap. No HTTP types here.
import type { JobQueue } from '../../jobs/queue.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import { createdAfter, type CursorCodec, type Page, pageByCreated } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import type { FilesService } from '../files/service.js';
import { ClipStaging, type StagedUpload } from '../files/staging.js';
import type { VoicePrint } from '../../engines/diarization/interface.js';
import { SpeakerNameTaken, type SpeakerRow, type SpeakerSampleRow, type SpeakersRepository, type Tx } from './repository.js';
import type { CreateSpeakerBody, SpeakerRecord, SpeakerSampleRecord } from './schemas.js';

export const PROFILE_JOB = 'speaker.profile';
export interface ProfileJobPayload {
  [key: string]: string | number;
  speaker_id: string;
  revision: number;
}

export const MAX_SPEAKER_NAME_LENGTH = 128;
export const MAX_SAMPLE_FILENAME_LENGTH = 256;
export const MAX_METADATA_BYTES = 4096;
/** Enrolled speakers one transcription or session may ask for. */
export const MAX_SPEAKERS_PER_REQUEST = 32;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SpeakersServiceOptions {
  maxFileSizeBytes: number;
  /** 0: no cap. */
  maxSpeakersPerProject: number;
  maxSamplesPerProject: number;
  clock?: Clock;
}

/** An enrolled speaker ready to be recognised. */
export interface EnrolledSpeaker {
  id: string;
  name: string;
  print: VoicePrint;
}

export class SpeakersService {
  private readonly clock: Clock;
  /** Enrolment samples sent as a part: staged within the size limit, then committed or discarded. */
  readonly clips: ClipStaging;

  constructor(
    private readonly repo: SpeakersRepository,
    private readonly files: FilesService,
    private readonly blobs: BlobStore,
    private readonly cursors: CursorCodec,
    private readonly queue: JobQueue,
    private readonly opts: SpeakersServiceOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.clips = new ClipStaging(blobs, opts.maxFileSizeBytes, 'enrolment sample');
  }

  private now(): string {
    return this.clock.now().toISOString();
  }

  private toRecord(row: SpeakerRow, samples: number): SpeakerRecord {
    return {
      id: row.id,
      name: row.name,
      metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, unknown>) : null,
      status: row.status,
      error_type: row.status === 'failed' ? row.error_type : null,
      error_message: row.status === 'failed' ? row.error_message : null,
      num_samples: samples,
      speech_ms: row.status === 'ready' ? row.speech_ms : null,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  private sampleRecord(row: SpeakerSampleRow): SpeakerSampleRecord {
    return { id: row.id, speaker_id: row.speaker_id, filename: row.filename, size: Number(row.size), speech_ms: row.speech_ms, created_at: row.created_at };
  }

  private async record(row: SpeakerRow): Promise<SpeakerRecord> {
    return this.toRecord(row, (await this.repo.sampleCounts([row.id])).get(row.id) ?? 0);
  }

  private notFound(id: string): ApiError {
    return new ApiError('speaker_not_found', `Speaker ${id} not found.`);
  }

  private async row(ctx: Pick<AuthContext, 'projectId'>, id: string): Promise<SpeakerRow> {
    const row = UUID_RE.test(id) ? await this.repo.get(ctx.projectId, id.toLowerCase()) : undefined;
    if (!row) throw this.notFound(id);
    return row;
  }

  async create(ctx: AuthContext, body: CreateSpeakerBody): Promise<SpeakerRecord> {
    const name = body.name.trim();
    if (name.length === 0) throw invalidField('name', 'must not be empty', 'invalid_length');
    // Unknown voices are labelled "1", "2", ...: a name of digits only could not be told from one.
    if (/^\d+$/.test(name)) throw invalidField('name', 'must not be digits only (those are the labels of speakers not recognised)', 'invalid_value');
    const metadata = body.metadata === undefined || body.metadata === null ? null : JSON.stringify(body.metadata);
    if (metadata !== null && Buffer.byteLength(metadata) > MAX_METADATA_BYTES)
      throw invalidField('metadata', `must be at most ${MAX_METADATA_BYTES} bytes as JSON`, 'invalid_length');
    const now = this.now();
    const row: SpeakerRow = {
      id: newId(),
      organization_id: ctx.organizationId,
      project_id: ctx.projectId,
      name,
      metadata,
      status: 'no_samples',
      revision: 0,
      error_type: null,
      error_message: null,
      profile: null,
      speech_ms: null,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.repo.locked(ctx.projectId, async (tx) => {
        const cap = this.opts.maxSpeakersPerProject;
        if (cap > 0 && (await this.repo.countSpeakers(ctx.projectId, tx)) >= cap)
          throw new ApiError('limit_exceeded', `Limit exceeded: speakers_per_project (${cap} enrolled speakers in the project).`);
        await this.repo.insert(row, tx);
      });
    } catch (err) {
      if (err instanceof SpeakerNameTaken) throw new ApiError('speaker_name_conflict', `A speaker named "${name}" already exists in this project.`);
      throw err;
    }
    return this.toRecord(row, 0);
  }

  async get(ctx: AuthContext, id: string): Promise<SpeakerRecord> {
    return this.record(await this.row(ctx, id));
  }

  async list(ctx: AuthContext, limit: number, cursor?: string): Promise<Page<SpeakerRecord>> {
    const listName = `speakers:${ctx.projectId}`;
    const after = createdAfter(this.cursors, cursor, listName);
    const page = pageByCreated(await this.repo.list(ctx.projectId, limit + 1, after), limit, this.cursors, listName);
    const counts = await this.repo.sampleCounts(page.items.map((r) => r.id));
    return { items: page.items.map((r) => this.toRecord(r, counts.get(r.id) ?? 0)), next_page_cursor: page.next_page_cursor };
  }

  /** Permanent: rows (the profile with them), then the samples' audio. A queued job finds no speaker and ends. */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    if (!UUID_RE.test(id)) throw this.notFound(id);
    const gone = await this.repo.delete(ctx.projectId, id.toLowerCase());
    if (!gone) throw this.notFound(id);
    for (const key of gone.blobKeys) await this.blobs.remove(key);
  }

  /** A sample from an uploaded part (201 at once; its audio is judged by the profile job). */
  async addUploaded(ctx: AuthContext, requestId: string, speakerId: string, staged: StagedUpload, fields: { filename?: string }): Promise<SpeakerSampleRecord> {
    try {
      const speaker = await this.row(ctx, speakerId);
      const filename = fields.filename || staged.partFilename || 'sample';
      return await this.addSample(ctx, requestId, speaker, filename, staged.size, (key) => this.clips.commit(staged, key));
    } finally {
      await this.clips.discard(staged);
    }
  }

  /** A sample copied from an uploaded file of the project (the file may be deleted afterwards). */
  async addFromFile(ctx: AuthContext, requestId: string, speakerId: string, fileId: unknown): Promise<SpeakerSampleRecord> {
    if (typeof fileId !== 'string' || fileId.length === 0)
      throw invalidField('file_id', 'is required (or send the audio as a multipart "file" part)', 'missing');
    const speaker = await this.row(ctx, speakerId);
    const file = await this.files.getRow(ctx, fileId);
    if (!file) throw new ApiError('file_not_found', `File ${fileId} not found.`);
    if (Number(file.size) > this.opts.maxFileSizeBytes)
      throw invalidField('file_id', `the file is larger than the enrolment sample limit of ${this.opts.maxFileSizeBytes} bytes`, 'file_too_large');
    return this.addSample(ctx, requestId, speaker, file.filename, Number(file.size), (key) => this.blobs.linkOrCopy(file.blob_key, key));
  }

  private async addSample(
    ctx: AuthContext,
    requestId: string,
    speaker: SpeakerRow,
    filename: string,
    size: number,
    store: (key: string) => Promise<void>,
  ): Promise<SpeakerSampleRecord> {
    if (filename.length > MAX_SAMPLE_FILENAME_LENGTH)
      throw invalidField('filename', `must be at most ${MAX_SAMPLE_FILENAME_LENGTH} characters`, 'invalid_length');
    const id = newId();
    const row: SpeakerSampleRow = {
      id,
      speaker_id: speaker.id,
      organization_id: ctx.organizationId,
      project_id: ctx.projectId,
      api_key_id: ctx.apiKeyId,
      source: ctx.source,
      request_id: requestId,
      filename,
      size,
      blob_key: `speakers/${ctx.projectId}/${speaker.id}/${id}`,
      print: null,
      speech_ms: null,
      created_at: this.now(),
    };
    // Bytes first, rows second: a row never points at missing bytes; a refused row takes its bytes along.
    await store(row.blob_key);
    try {
      await this.repo.locked(ctx.projectId, async (tx) => {
        const cap = this.opts.maxSamplesPerProject;
        if (cap > 0 && (await this.repo.countSamples(ctx.projectId, tx)) >= cap)
          throw new ApiError('limit_exceeded', `Limit exceeded: speaker_samples_per_project (${cap} enrolment samples in the project).`);
        // Deleted meanwhile: nothing to add to.
        if (!(await this.repo.get(ctx.projectId, speaker.id, tx))) throw this.notFound(speaker.id);
        await this.repo.insertSample(row, tx);
        await this.changed(speaker.id, tx);
      });
    } catch (err) {
      await this.blobs.remove(row.blob_key);
      throw err;
    }
    return this.sampleRecord(row);
  }

  /** New revision of the speaker's samples, and its profile job in the same transaction. */
  private async changed(speakerId: string, tx: Tx): Promise<void> {
    const { revision, status } = await this.repo.bumpRevision(speakerId, this.now(), tx);
    if (status === 'processing')
      await this.queue.enqueue<ProfileJobPayload>(PROFILE_JOB, { speaker_id: speakerId, revision }, { tx, singletonKey: `${speakerId}:${revision}` });
  }

  async listSamples(ctx: AuthContext, speakerId: string, limit: number, cursor?: string): Promise<Page<SpeakerSampleRecord>> {
    const speaker = await this.row(ctx, speakerId);
    const listName = `speaker-samples:${speaker.id}`;
    const after = createdAfter(this.cursors, cursor, listName);
    const page = pageByCreated(await this.repo.listSamples(speaker.id, limit + 1, after), limit, this.cursors, listName);
    return { items: page.items.map((r) => this.sampleRecord(r)), next_page_cursor: page.next_page_cursor };
  }

  private async sampleRow(ctx: AuthContext, speakerId: string, sampleId: string): Promise<SpeakerSampleRow> {
    const speaker = await this.row(ctx, speakerId);
    const sample = UUID_RE.test(sampleId) ? await this.repo.sample(speaker.id, sampleId.toLowerCase()) : undefined;
    if (!sample) throw new ApiError('speaker_sample_not_found', `Enrolment sample ${sampleId} of speaker ${speakerId} not found.`);
    return sample;
  }

  async getSample(ctx: AuthContext, speakerId: string, sampleId: string): Promise<SpeakerSampleRecord> {
    return this.sampleRecord(await this.sampleRow(ctx, speakerId, sampleId));
  }

  /** The sample's row and audio go; the profile is computed again from the rest (or the speaker has no samples). */
  async deleteSample(ctx: AuthContext, speakerId: string, sampleId: string): Promise<void> {
    const sample = await this.sampleRow(ctx, speakerId, sampleId);
    await this.repo.locked(ctx.projectId, async (tx) => {
      if (!(await this.repo.sample(sample.speaker_id, sample.id, tx)))
        throw new ApiError('speaker_sample_not_found', `Enrolment sample ${sampleId} of speaker ${speakerId} not found.`);
      await this.repo.deleteSample(sample.id, tx);
      await this.changed(sample.speaker_id, tx);
    });
    await this.blobs.remove(sample.blob_key);
  }

  /**
   * Check a request's `speakers` (transcription create, real-time config): ids of this project, each ready.
   * 404 speaker_not_found, 409 speaker_not_ready; duplicates and too many are invalid_request.
   */
  async forRecognition(projectId: string, ids: readonly string[], field = 'speakers'): Promise<EnrolledSpeaker[]> {
    if (ids.length > MAX_SPEAKERS_PER_REQUEST)
      throw invalidField(field, `at most ${MAX_SPEAKERS_PER_REQUEST} speakers may be recognised at once`, 'invalid_length');
    const normalised = ids.map((id) => id.toLowerCase());
    if (new Set(normalised).size !== normalised.length) throw invalidField(field, 'must not repeat a speaker', 'invalid_value');
    const rows = await this.repo.getMany(
      projectId,
      normalised.filter((id) => UUID_RE.test(id)),
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return normalised.map((id, i) => {
      const row = byId.get(id);
      if (!row) throw new ApiError('speaker_not_found', `Speaker ${ids[i]} not found.`);
      if (row.status !== 'ready' || !row.profile)
        throw new ApiError(
          'speaker_not_ready',
          `Speaker ${ids[i]} ("${row.name}") cannot be recognised: its profile is ${row.status === 'failed' ? `failed (${row.error_type})` : row.status}.`,
        );
      return { id: row.id, name: row.name, print: JSON.parse(row.profile) as VoicePrint };
    });
  }

  /** At job time: the speakers still enrolled and ready (one deleted since creation is left out, not an error). */
  async stillEnrolled(projectId: string, ids: readonly string[]): Promise<EnrolledSpeaker[]> {
    const rows = await this.repo.getMany(projectId, [...ids]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const r = byId.get(id);
      return r?.status === 'ready' && r.profile ? [{ id: r.id, name: r.name, print: JSON.parse(r.profile) as VoicePrint }] : [];
    });
  }
}
