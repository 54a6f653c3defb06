// Upload admission on the audio-check backlog: with the node's checkers busy and this many uploads per checker
// waiting, the next upload is refused before its body is sent (429 with Retry-After); one fewer waiting, and once the
// backlog drains, uploads are admitted. Real ffprobe/ffmpeg checks fill the backlog; SQLite holds the rows.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_ENGINES, type OpenedDatabase } from '../../../test/databases.js';
import { makeSpeech, tempDir } from '../../../test/harness.js';
import { audioCheckBacklog, probeWithFfmpeg } from '../../audio/probe.js';
import { CursorCodec } from '../../lib/cursor.js';
import { LocalBlobStore } from '../../storage/local-blob-store.js';
import { ApiError } from '../../wire/api-error.js';
import type { AuthContext } from '../auth/service.js';
import { FilesRepository } from './repository.js';
import { FilesService, MAX_WAITING_CHECKS_PER_SLOT } from './service.js';

const dir = tempDir('parlance-files-service-');
let opened: OpenedDatabase;
let files: FilesService;
let mp3: string;
const ctx = { organizationId: 'org', projectId: 'project', apiKeyId: 'key', permissions: [], source: 'api' } as unknown as AuthContext;

beforeAll(async () => {
  opened = await DATABASE_ENGINES[0]![1]();
  const blobs = new LocalBlobStore(path.join(dir, 'blobs'));
  await blobs.init();
  const caps = { maxFileSizeBytes: 1e9, filesTotalCountOrg: 0, filesTotalCountProject: 0, filesTotalSizeGbOrg: 0, filesTotalSizeGbProject: 0 };
  files = new FilesService(new FilesRepository(opened.db.kysely, opened.db.dialect), blobs, new CursorCodec(Buffer.alloc(32, 1)), caps);
  const wav = await makeSpeech(path.join(dir, 'speech.wav'), 'Glue the sheet to the dark blue background.');
  mp3 = path.join(dir, 'speech.mp3');
  await promisify(execFile)('ffmpeg', ['-nostdin', '-v', 'error', '-i', wav, mp3]);
});
afterAll(async () => {
  await opened?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('FilesService upload admission', () => {
  it('refuses an upload at the check backlog bound with 429 and Retry-After, and admits one below it', async () => {
    const slots = availableParallelism();
    const bound = MAX_WAITING_CHECKS_PER_SLOT * slots;
    // The checks take their places synchronously: the busy checkers, then bound - 1 waiting.
    const checks = Array.from({ length: slots + bound - 1 }, () => probeWithFfmpeg(mp3));
    expect(audioCheckBacklog().waiting).toBe(bound - 1);
    const below = files.precheck(ctx, 1000);
    checks.push(probeWithFfmpeg(mp3));
    expect(audioCheckBacklog().waiting).toBe(bound);
    const at = files.precheck(ctx, 1000);
    await expect(below).resolves.toBeUndefined();
    const err = await at.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect((err as ApiError).type).toBe('limit_exceeded');
    expect(Number((err as ApiError).headers['retry-after'])).toBeGreaterThanOrEqual(1);

    const probes = await Promise.all(checks);
    expect(probes.every((p) => p.format === 'mp3' && p.durationMs! > 1000)).toBe(true);
    expect(audioCheckBacklog().waiting).toBe(0);
    await expect(files.precheck(ctx, 1000)).resolves.toBeUndefined();
  });
});
