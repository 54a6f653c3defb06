// Async throughput with 1 and 2 worker processes (issue #17): one API node and N `--role worker` nodes on one
// PostgreSQL database with the pg-boss queue, sharing one data directory (local blobs). Each worker process runs one
// STT engine thread (PARLANCE_STT_WORKERS=1), so the comparison is of processes, not of threads in one process.
// The same batch of flite speech files is submitted at once; wall time from the first create to the last completion.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { rmSync } from 'node:fs';
import { createPgDatabase, makeSpeech, startParlance, tempDir, uploadFile, waitFor, type Parlance } from '../test/harness.js';
import { HARVARD_SENTENCES, benchServerEnv, round, type Row, type SuiteOptions, type SuiteResult } from './lib.js';

const MODEL = 'stt-async-v4';

async function runBatch(api: Parlance, fileIds: string[]): Promise<{ wallMs: number; audioMs: number }> {
  const t0 = performance.now();
  const ids = await Promise.all(
    fileIds.map(async (fileId) => {
      const res = await api.request('/v1/transcriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, file_id: fileId }),
      });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    }),
  );
  let audioMs = 0;
  for (const id of ids) {
    const r = await waitFor(
      async () => (await (await api.request(`/v1/transcriptions/${id}`)).json()) as { status: string; audio_duration_ms: number; error_message: string | null },
      (x) => ['completed', 'error', 'failed'].includes(x.status),
      30 * 60_000,
      100,
    );
    if (r.status !== 'completed') throw new Error(`transcription ${id} ended ${r.status}: ${r.error_message}`);
    audioMs += r.audio_duration_ms;
  }
  return { wallMs: performance.now() - t0, audioMs };
}

export async function run({ quick, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const jobs = quick ? 4 : 8;
  const work = tempDir('parlance-bench-workers-');
  cleanup.add('work dir', () => rmSync(work, { recursive: true, force: true }));
  log(`synthesizing ${jobs} speech files`);
  const files: string[] = [];
  for (let i = 0; i < jobs; i++) {
    const text = Array.from({ length: 3 }, (_, k) => HARVARD_SENTENCES[(i * 3 + k) % HARVARD_SENTENCES.length]).join(' ');
    files.push(await makeSpeech(path.join(work, `job-${i}.wav`), text));
  }
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { jobs };
  let oneWorker: number | undefined;
  for (const count of [1, 2]) {
    const db = await createPgDatabase();
    cleanup.add('database', () => db.drop());
    const dataDir = tempDir('parlance-bench-workers-data-');
    cleanup.add('data dir', () => rmSync(dataDir, { recursive: true, force: true }));
    const env = benchServerEnv({ DATABASE_URL: db.url, PARLANCE_JOB_QUEUE: 'pg-boss', PARLANCE_STT_WORKERS: '1' });
    const api = await startParlance({ dataDir, env: { ...env, PARLANCE_ROLE: 'api' } });
    cleanup.add('api node', () => api.stop());
    const workers: Parlance[] = [];
    for (let i = 0; i < count; i++) {
      const w = await startParlance({ dataDir, env: { ...env, PARLANCE_ROLE: 'worker' } });
      cleanup.add('worker node', () => w.stop());
      workers.push(w);
    }
    const fileIds: string[] = [];
    for (const f of files) fileIds.push(await uploadFile(api, f));
    // Models load on first use: one job per worker first, untimed.
    log(`${count} worker(s): warming up`);
    await runBatch(api, fileIds.slice(0, count));
    log(`${count} worker(s): ${jobs} jobs at once`);
    const { wallMs, audioMs } = await runBatch(api, fileIds);
    const perMin = (jobs / wallMs) * 60_000;
    const speed = audioMs / wallMs;
    oneWorker ??= perMin;
    raw[`workers_${count}`] = { wall_ms: round(wallMs), audio_ms: audioMs, jobs_per_min: round(perMin), audio_s_per_s: round(speed, 3) };
    rows.push({
      benchmark: `${count} worker process(es): ${jobs} jobs (${round(audioMs / 1000, 1)} s of audio) at once`,
      result: `${round(wallMs / 1000, 1)} s wall, ${round(perMin, 1)} jobs/min, ${round(speed, 2)} s audio/s`,
      target: '—',
      met: null,
    });
    if (count === 2) rows.push({ benchmark: 'throughput, 2 worker processes vs 1', result: `${round(perMin / oneWorker, 2)}×`, target: '—', met: null });
    for (const w of workers) await w.stop();
    await api.stop();
  }
  return { rows, raw };
}
