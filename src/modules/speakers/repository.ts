// Enrolled speakers and their enrolment samples, on SQLite and PostgreSQL alike. Every change to a speaker's sample
// set bumps its revision and sets it processing in the transaction that enqueues the profile job for that revision;
// a job's result is kept only while the revision is still the one it was computed for.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../storage/database.js';
import type { Database, SpeakerSamplesTable, SpeakersTable } from '../../storage/schema.js';

export type SpeakerRow = SpeakersTable;
export type SpeakerSampleRow = SpeakerSamplesTable;

/** The database refused a second speaker with the same name in a project. */
export class SpeakerNameTaken extends Error {}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export type Tx = Kysely<Database>;

export class SpeakersRepository {
  constructor(
    readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Run `fn` with the project's speakers serialised (PostgreSQL locks the project's row; SQLite runs one write
   * transaction at a time), so that concurrent requests cannot together overshoot a cap.
   */
  async locked<T>(projectId: string, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (tx) => {
      if (this.dialect === 'postgres') await tx.selectFrom('projects').select('id').where('id', '=', projectId).forUpdate().execute();
      return fn(tx);
    });
  }

  async countSpeakers(projectId: string, db: Tx = this.db): Promise<number> {
    const r = await db
      .selectFrom('speakers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async countSamples(projectId: string, db: Tx = this.db): Promise<number> {
    const r = await db
      .selectFrom('speaker_samples')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Throws SpeakerNameTaken when the name is in use in the project. */
  async insert(row: SpeakerRow, tx: Tx): Promise<void> {
    try {
      await tx.insertInto('speakers').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new SpeakerNameTaken(row.name);
      throw err;
    }
  }

  async get(projectId: string, id: string, db: Tx = this.db): Promise<SpeakerRow | undefined> {
    return db.selectFrom('speakers').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  }

  async getById(id: string): Promise<SpeakerRow | undefined> {
    return this.db.selectFrom('speakers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async getMany(projectId: string, ids: string[]): Promise<SpeakerRow[]> {
    if (!ids.length) return [];
    return this.db.selectFrom('speakers').selectAll().where('project_id', '=', projectId).where('id', 'in', ids).execute();
  }

  /** Newest first; `after` is the (created_at, id) of the previous page's last row. */
  async list(projectId: string, limit: number, after?: [string, string]): Promise<SpeakerRow[]> {
    let q = this.db.selectFrom('speakers').selectAll().where('project_id', '=', projectId);
    if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** Samples per speaker, for the records. */
  async sampleCounts(speakerIds: string[]): Promise<Map<string, number>> {
    if (!speakerIds.length) return new Map();
    const rows = await this.db
      .selectFrom('speaker_samples')
      .select(['speaker_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('speaker_id', 'in', speakerIds)
      .groupBy('speaker_id')
      .execute();
    return new Map(rows.map((r) => [r.speaker_id, Number(r.n)]));
  }

  async samples(speakerId: string): Promise<SpeakerSampleRow[]> {
    return this.db.selectFrom('speaker_samples').selectAll().where('speaker_id', '=', speakerId).orderBy('created_at').orderBy('id').execute();
  }

  /** A speaker's samples, newest first, for the cursor list. */
  async listSamples(speakerId: string, limit: number, after?: [string, string]): Promise<SpeakerSampleRow[]> {
    let q = this.db.selectFrom('speaker_samples').selectAll().where('speaker_id', '=', speakerId);
    if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after[0], after[1])));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async sample(speakerId: string, id: string, db: Tx = this.db): Promise<SpeakerSampleRow | undefined> {
    return db.selectFrom('speaker_samples').selectAll().where('speaker_id', '=', speakerId).where('id', '=', id).executeTakeFirst();
  }

  async insertSample(row: SpeakerSampleRow, tx: Tx): Promise<void> {
    await tx.insertInto('speaker_samples').values(row).execute();
  }

  async deleteSample(id: string, tx: Tx): Promise<void> {
    await tx.deleteFrom('speaker_samples').where('id', '=', id).execute();
  }

  /** The sample set changed: a new revision, processing (or no_samples when none is left). Returns the revision. */
  async bumpRevision(speakerId: string, now: string, tx: Tx): Promise<{ revision: number; status: SpeakerRow['status'] }> {
    const left = await tx
      .selectFrom('speaker_samples')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('speaker_id', '=', speakerId)
      .executeTakeFirstOrThrow();
    const status = Number(left.n) > 0 ? 'processing' : 'no_samples';
    const row = await tx
      .updateTable('speakers')
      .set((eb) => ({
        revision: eb(eb.ref('revision'), '+', 1),
        status,
        error_type: null,
        error_message: null,
        profile: null,
        speech_ms: null,
        updated_at: now,
      }))
      .where('id', '=', speakerId)
      .returning(['revision'])
      .executeTakeFirstOrThrow();
    return { revision: Number(row.revision), status };
  }

  async setSamplePrint(id: string, print: string, speechMs: number): Promise<void> {
    await this.db.updateTable('speaker_samples').set({ print, speech_ms: speechMs }).where('id', '=', id).execute();
  }

  /** processing → ready | failed for `revision`; false when the sample set changed since (or the speaker is gone). */
  async finish(
    speakerId: string,
    revision: number,
    outcome: Pick<SpeakerRow, 'status' | 'error_type' | 'error_message' | 'profile' | 'speech_ms'>,
    now: string,
  ): Promise<boolean> {
    const r = await this.db
      .updateTable('speakers')
      .set({ ...outcome, updated_at: now })
      .where('id', '=', speakerId)
      .where('revision', '=', revision)
      .where('status', '=', 'processing')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Delete the speaker and its samples; returns the speaker and the samples' blob keys. */
  async delete(projectId: string, id: string): Promise<{ row: SpeakerRow; blobKeys: string[] } | undefined> {
    return this.db.transaction().execute(async (tx) => {
      const row = await this.get(projectId, id, tx);
      if (!row) return undefined;
      const samples = await tx.selectFrom('speaker_samples').select('blob_key').where('speaker_id', '=', id).execute();
      await tx.deleteFrom('speaker_samples').where('speaker_id', '=', id).execute();
      const r = await tx.deleteFrom('speakers').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0 ? { row, blobKeys: samples.map((s) => s.blob_key) } : undefined;
    });
  }
}
