// Files: rules for upload (per-file limit, organization/project caps, audio check), listing, counting and
// permanent deletion. Streams in, rows out; knows nothing of HTTP.
import type { Readable } from 'node:stream';
import { AudioProbeError, AudioProbeInterrupted, audioCheckBacklog, probeAudioFile } from '../../audio/probe.js';
import type { Settings } from '../../config/settings.js';
import { type Clock, systemClock } from '../../lib/clock.js';
import { createdAfter, type CursorCodec, type Page, pageByCreated } from '../../lib/cursor.js';
import { newId } from '../../lib/ids.js';
import type { BlobStore, ReadRange } from '../../storage/blob-store.js';
import { ApiError, invalidField } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import type { FileRecord } from './schemas.js';
import type { FileRow, FilesRepository, Usage } from './repository.js';
import { ByteLimitExceeded, stagePart, storageFailure, type StagedUpload } from './staging.js';

export type { StagedUpload } from './staging.js';

export const MAX_FILENAME_LENGTH = 256;
export const MAX_CLIENT_REFERENCE_ID_LENGTH = 256;
const GB = 1e9;
/**
 * Uploads whose audio check (ffprobe and an ffmpeg decode, one per core at a time) would wait behind this many others
 * per core are refused at once with 429 and Retry-After, before their body is sent, instead of queueing without bound.
 */
export const MAX_WAITING_CHECKS_PER_SLOT = 8;
/** A GB cap in whole bytes: 0.000064159 * 1e9 is 64158.99999999999 in floating point, and must mean 64159. */
const capBytes = (gb: number): number => Math.round(gb * GB);

function checkFailure(cause: unknown): ApiError {
  return new ApiError(
    'internal_error',
    'The server could not check the audio file: its audio checker stopped unexpectedly. Nothing was kept; please try again.',
    { cause },
  );
}

export function toFileRecord(row: FileRow): FileRecord {
  return { id: row.id, filename: row.filename, size: row.size, created_at: row.created_at, client_reference_id: row.client_reference_id };
}

type CapSettings = Pick<Settings, 'maxFileSizeBytes' | 'filesTotalCountOrg' | 'filesTotalCountProject' | 'filesTotalSizeGbOrg' | 'filesTotalSizeGbProject'>;

export interface FileContent {
  id: string;
  filename: string;
  size: number;
  contentType: string;
  open(range?: ReadRange): Promise<Readable>;
}

// ffprobe's format names (a comma-separated list of aliases) to the media types browsers play.
const MEDIA_TYPES: [RegExp, string][] = [
  [/\bwav\b/, 'audio/wav'],
  [/\bmp3\b/, 'audio/mpeg'],
  [/\bogg\b/, 'audio/ogg'],
  [/\bflac\b/, 'audio/flac'],
  [/\b(mp4|m4a|mov)\b/, 'audio/mp4'],
  [/\b(webm|matroska)\b/, 'audio/webm'],
  [/\baac\b/, 'audio/aac'],
  [/\baiff\b/, 'audio/aiff'],
  [/\bamr\b/, 'audio/amr'],
  [/\basf\b/, 'audio/x-ms-asf'],
];

export function mediaType(format: string | null): string {
  return MEDIA_TYPES.find(([re]) => format && re.test(format))?.[1] ?? 'application/octet-stream';
}

const isMissing = (err: unknown): boolean => {
  const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } };
  return e.code === 'ENOENT' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

export type FileDeletedListener = (projectId: string, fileId: string) => Promise<void>;

export class FilesService {
  private readonly clock: Clock;
  private readonly deletedListeners: FileDeletedListener[] = [];

  constructor(
    private readonly repo: FilesRepository,
    private readonly blobs: BlobStore,
    private readonly cursors: CursorCodec,
    private readonly caps: CapSettings,
    clock?: Clock,
  ) {
    this.clock = clock ?? systemClock;
  }

  /** Cap message if adding `files` files of `bytes` bytes would break a count or size cap; else null. */
  private capViolation(usage: { project: Usage; organization: Usage }, bytes: number, files: number): string | null {
    const c = this.caps;
    const checks: [number, number, string][] = [
      [c.filesTotalCountProject, usage.project.count + files, `files_total_count cap of the project (${c.filesTotalCountProject} files)`],
      [c.filesTotalCountOrg, usage.organization.count + files, `files_total_count cap of the organization (${c.filesTotalCountOrg} files)`],
      [capBytes(c.filesTotalSizeGbProject), usage.project.bytes + bytes, `files_total_size_gb cap of the project (${c.filesTotalSizeGbProject} GB)`],
      [capBytes(c.filesTotalSizeGbOrg), usage.organization.bytes + bytes, `files_total_size_gb cap of the organization (${c.filesTotalSizeGbOrg} GB)`],
    ];
    for (const [cap, wouldBe, name] of checks) if (cap > 0 && wouldBe > cap) return `Limit exceeded: this upload would exceed the ${name}.`;
    return null;
  }

  private async usage(ctx: AuthContext): Promise<{ project: Usage; organization: Usage }> {
    return { project: await this.repo.usage('project', ctx.projectId), organization: await this.repo.usage('organization', ctx.organizationId) };
  }

  /**
   * Refuse early what cannot fit: a full count cap, or a declared body larger than the per-file limit
   * (plus multipart framing) — so a client is not made to send a gigabyte just to hear "no".
   */
  async precheck(ctx: AuthContext, declaredBytes: number | undefined): Promise<void> {
    const checks = audioCheckBacklog();
    if (checks.waiting >= MAX_WAITING_CHECKS_PER_SLOT * checks.slots) {
      const seconds = checks.retryAfterSeconds;
      throw new ApiError('limit_exceeded', `This server is saturated with audio checks (${checks.waiting} uploads waiting); retry in ${seconds} s.`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
    const refused = this.capViolation(await this.usage(ctx), 0, 1);
    if (refused) throw new ApiError('limit_exceeded', refused);
    if (declaredBytes !== undefined && declaredBytes > this.caps.maxFileSizeBytes + 1024 * 1024) throw this.tooLarge();
  }

  private tooLarge(): ApiError {
    return invalidField('file', `file is larger than the per-file limit of ${this.caps.maxFileSizeBytes} bytes`, 'file_too_large');
  }

  /** Stream the file part to disk, never holding more than a chunk in memory, within limit and quota. */
  async receive(ctx: AuthContext, file: Readable, partFilename: string): Promise<StagedUpload> {
    const usage = await this.usage(ctx);
    const sizeRoom = (cap: number, used: number) => (cap > 0 ? capBytes(cap) - used : Infinity);
    const roomBytes = Math.min(
      sizeRoom(this.caps.filesTotalSizeGbProject, usage.project.bytes),
      sizeRoom(this.caps.filesTotalSizeGbOrg, usage.organization.bytes),
    );
    try {
      return await stagePart(this.blobs, file, partFilename, { maxBytes: this.caps.maxFileSizeBytes, roomBytes });
    } catch (err) {
      if (!(err instanceof ByteLimitExceeded)) throw err;
      if (err.cap === 'file') throw this.tooLarge();
      throw new ApiError('limit_exceeded', this.capViolation(usage, err.size, 1) ?? 'Limit exceeded: files_total_size_gb cap.');
    }
  }

  /** Validate the staged file, store its row within the caps, and move the bytes into place. */
  async commit(ctx: AuthContext, staged: StagedUpload, fields: { client_reference_id?: string; filename?: string }): Promise<FileRecord> {
    try {
      const filename = fields.filename ?? staged.partFilename;
      if (!filename) throw invalidField('filename', 'must not be empty');
      if (filename.length > MAX_FILENAME_LENGTH) throw invalidField('filename', `must be at most ${MAX_FILENAME_LENGTH} characters`, 'invalid_length');
      const ref = fields.client_reference_id;
      if (ref !== undefined && ref.length > MAX_CLIENT_REFERENCE_ID_LENGTH)
        throw invalidField('client_reference_id', `must be at most ${MAX_CLIENT_REFERENCE_ID_LENGTH} characters`, 'invalid_length');
      let probe;
      try {
        probe = await probeAudioFile(staged.tempPath);
      } catch (err) {
        if (err instanceof AudioProbeError) throw new ApiError('invalid_audio_file', `Invalid audio file: ${err.message}.`);
        // The checker was killed, not the file found wanting: the server's failure (the cause goes to the log).
        if (err instanceof AudioProbeInterrupted) throw checkFailure(err);
        throw err;
      }
      const id = newId();
      const row: FileRow = {
        id,
        organization_id: ctx.organizationId,
        project_id: ctx.projectId,
        filename,
        size: staged.size,
        client_reference_id: ref ?? null,
        source: ctx.source,
        blob_key: `files/${ctx.projectId}/${id}`,
        duration_ms: probe.durationMs,
        format: probe.format,
        created_at: this.clock.now().toISOString(),
      };
      // Bytes first, row second: a row never points at missing bytes. If the row is refused, the bytes go.
      await this.blobs.commit(staged.tempPath, row.blob_key).catch((err: unknown) => {
        throw storageFailure(err);
      });
      const refused = await this.repo
        .insertWithinCaps(row, (usage, size) => this.capViolation(usage, size, 1))
        .catch(async (err: unknown) => {
          await this.blobs.remove(row.blob_key);
          throw err;
        });
      if (refused) {
        await this.blobs.remove(row.blob_key);
        throw new ApiError('limit_exceeded', refused);
      }
      return toFileRecord(row);
    } finally {
      await this.blobs.discardTemp(staged.tempPath);
    }
  }

  async discard(staged: StagedUpload): Promise<void> {
    await this.blobs.discardTemp(staged.tempPath);
  }

  async get(ctx: AuthContext, id: string): Promise<FileRecord> {
    const row = await this.repo.get(ctx.projectId, id);
    if (!row) throw new ApiError('file_not_found', `File ${id} not found.`);
    return toFileRecord(row);
  }

  /** The stored row (with its blob key), for other modules that read the bytes. */
  async getRow(ctx: Pick<AuthContext, 'projectId'>, id: string): Promise<FileRow | undefined> {
    return this.repo.get(ctx.projectId, id);
  }

  async list(ctx: AuthContext, limit: number, cursor?: string): Promise<Page<FileRecord>> {
    const listName = `files:${ctx.projectId}`;
    const after = createdAfter(this.cursors, cursor, listName);
    const page = pageByCreated(await this.repo.list(ctx.projectId, limit + 1, after), limit, this.cursors, listName);
    return { items: page.items.map(toFileRecord), next_page_cursor: page.next_page_cursor };
  }

  async count(ctx: AuthContext): Promise<{ playground: number; public_api: number; total: number }> {
    const by = await this.repo.countBySource(ctx.projectId);
    const playground = by.playground ?? 0;
    const public_api = by.public_api ?? 0;
    return { playground, public_api, total: playground + public_api };
  }

  /**
   * A file's bytes for download: its size and type now, the bytes (or a range of them) when `open` is called.
   * Bytes missing under a row (a delete racing the download) are file_not_found too.
   */
  async content(ctx: AuthContext, id: string): Promise<FileContent> {
    const row = await this.repo.get(ctx.projectId, id);
    if (!row) throw new ApiError('file_not_found', `File ${id} not found.`);
    return {
      id: row.id,
      filename: row.filename,
      size: row.size,
      contentType: mediaType(row.format),
      open: (range) =>
        this.blobs.openRead(row.blob_key, range).catch((err: unknown) => {
          if (isMissing(err)) throw new ApiError('file_not_found', `File ${id} not found.`, { cause: err });
          throw err;
        }),
    };
  }

  /** Other modules react to deletions (a queued transcription of the file fails). */
  onDeleted(listener: FileDeletedListener): void {
    this.deletedListeners.push(listener);
  }

  /** Permanent: the row goes, then the bytes; then whoever depended on the file hears of it. */
  async delete(ctx: AuthContext, id: string): Promise<void> {
    const row = await this.repo.delete(ctx.projectId, id);
    if (!row) throw new ApiError('file_not_found', `File ${id} not found.`);
    await this.blobs.remove(row.blob_key);
    for (const listener of this.deletedListeners) await listener(ctx.projectId, id);
  }
}
