// HTTP suite (issue: Foundation). Three targets, each measured against a real `parlance serve` process
// started by the test harness:
//   1. authenticated GET /v1/files/count        ≥ 5,000 req/s
//   2. GET /v1/files?limit=1000 with 1,000 files  p99 ≤ 50 ms
//   3. a 1 GiB upload streams to disk             server RSS growth < 100 MB
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { makeAudio, startParlance, tempDir, type Parlance } from '../test/harness.js';
import {
  benchServerEnv,
  findServerPid,
  load,
  type LoadResult,
  mib,
  MiB,
  processMemory,
  round,
  type Row,
  summarize,
  type SuiteOptions,
  type SuiteResult,
} from './lib.js';

const COUNT_TARGET_RPS = 5000;
const LIST_TARGET_P99_MS = 50;
const UPLOAD_TARGET_GROWTH_BYTES = 100 * 1e6; // "100 MB"

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  const q = opts.quick;
  const cfg = {
    loadSeconds: q ? 3 : 10,
    warmupSeconds: q ? 1 : 3,
    connections: 50,
    files: q ? 100 : 1000,
    uploadConcurrency: 4,
    listSequential: q ? 50 : 300,
    bigFileBytes: q ? 64 * MiB : 2 ** 30,
  };
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { config: cfg };

  const work = tempDir('parlance-bench-');
  opts.cleanup.add('remove bench temp dir', () => rm(work, { recursive: true, force: true }));

  // One server for targets 1 and 2; uploads are limited only by the (raised) file caps.
  const server = await startServer(opts, {});
  raw.server_pid = findServerPid(server.dataDir);

  // 1. GET /v1/files/count on an empty project (per-request overhead: auth lookup + one query).
  opts.log(`count: warm-up ${cfg.warmupSeconds} s, then ${cfg.loadSeconds} s × ${cfg.connections} connections`);
  const count = await countLoad(server, cfg);
  raw.count_empty_project = count;
  rows.push(countRow('GET /v1/files/count (0 files), c=50', count));

  // Baseline without auth or database: what Fastify + this machine + autocannon reach at all.
  opts.log('health: the same load on GET /health (no auth, no database) as a ceiling');
  const health = await load({ url: `${server.url}/health`, connections: cfg.connections, duration: cfg.loadSeconds });
  raw.health_baseline = health;
  rows.push({ benchmark: 'GET /health (no auth, no DB), c=50 — ceiling', result: loadSummary(health), target: '—', met: null });

  // 2. Fill the project, then list it.
  const tiny = await makeAudio(path.join(work, 'tiny.wav'), { seconds: 0.1 });
  opts.log(`uploading ${cfg.files} tiny WAV files, ${cfg.uploadConcurrency} at a time`);
  const uploads = await uploadMany(server, tiny, cfg.files, cfg.uploadConcurrency);
  raw.upload_tiny = uploads;
  rows.push({
    benchmark: `upload ${cfg.files} × 0.1 s WAV, concurrency ${cfg.uploadConcurrency}`,
    result: `${uploads.files_per_s} files/s, ${uploads.seconds} s (p50 ${Math.round(uploads.latency_ms.p50)} ms per upload)`,
    target: '—',
    met: null,
  });

  opts.log(`count again with ${cfg.files} files in the project`);
  const countFull = await countLoad(server, cfg);
  raw.count_full_project = countFull;
  rows.push(countRow(`GET /v1/files/count (${cfg.files} files), c=50`, countFull));

  opts.log(`list: ${cfg.listSequential} sequential requests, then ${cfg.loadSeconds} s × 10 connections`);
  const list = await listSequential(server, cfg.files, cfg.listSequential);
  raw.list_sequential = list;
  rows.push({
    benchmark: `GET /v1/files?limit=1000 (${cfg.files} files), sequential`,
    result: `p50 ${round(list.latency_ms.p50, 1)} ms, p95 ${round(list.latency_ms.p95, 1)} ms, p99 ${round(list.latency_ms.p99, 1)} ms; ${round(list.response_bytes / 1024, 1)} KiB`,
    target: `p99 ≤ ${LIST_TARGET_P99_MS} ms`,
    met: list.latency_ms.p99 <= LIST_TARGET_P99_MS,
  });
  const listLoad = await load({ url: `${server.url}/v1/files?limit=1000`, apiKey: server.apiKey, connections: 10, duration: cfg.loadSeconds });
  raw.list_load_c10 = listLoad;
  rows.push({
    benchmark: `GET /v1/files?limit=1000 (${cfg.files} files), c=10`,
    result: loadSummary(listLoad),
    target: '— (informational)',
    met: null,
  });
  await server.stop();

  // 3. A fresh server for the big upload, so its memory baseline is not the listing's heap.
  const big = await bigUpload(opts, work, cfg.bigFileBytes);
  raw.big_upload = big;
  rows.push({
    benchmark: `POST /v1/files ${sizeLabel(cfg.bigFileBytes)} WAV: server RSS growth`,
    result: `${mb(big.rss_growth_bytes)} MB (baseline ${mb(big.rss_baseline_bytes)} MB → peak ${mb(big.rss_peak_bytes)} MB)`,
    target: '< 100 MB',
    met: big.rss_growth_bytes < UPLOAD_TARGET_GROWTH_BYTES,
  });
  rows.push({
    benchmark: `POST /v1/files ${sizeLabel(cfg.bigFileBytes)} WAV: time`,
    result: `${big.upload_seconds} s, ${big.throughput_mb_per_s} MB/s → ${big.status}`,
    target: '—',
    met: null,
  });
  return { rows, raw };
}

const mb = (bytes: number) => round(bytes / 1e6, 1);
const sizeLabel = (bytes: number) => (bytes >= 2 ** 30 ? `${round(bytes / 2 ** 30, 2)} GiB` : `${mib(bytes)} MiB`);

async function startServer(opts: SuiteOptions, extra: Record<string, string>): Promise<Parlance> {
  const server = await startParlance({
    env: benchServerEnv({
      PARLANCE_MAX_FILE_SIZE_BYTES: String(4 * 2 ** 30),
      PARLANCE_FILES_TOTAL_COUNT_ORG: '0',
      PARLANCE_FILES_TOTAL_COUNT_PROJECT: '0',
      PARLANCE_FILES_TOTAL_SIZE_GB_ORG: '0',
      PARLANCE_FILES_TOTAL_SIZE_GB_PROJECT: '0',
      ...extra,
    }),
  });
  opts.cleanup.add(`stop server ${server.url}`, () => server.stop());
  return server;
}

function countRow(benchmark: string, r: LoadResult): Row {
  return {
    benchmark,
    result: loadSummary(r),
    target: `≥ ${COUNT_TARGET_RPS.toLocaleString('en-US')} req/s, 0 non-2xx`,
    met: r.req_per_s_mean >= COUNT_TARGET_RPS && r.non_2xx === 0 && r.errors === 0,
  };
}

function loadSummary(r: LoadResult): string {
  const bad = r.non_2xx || r.errors ? `, ${r.non_2xx} non-2xx, ${r.errors} errors` : ', 0 non-2xx';
  return `${Math.round(r.req_per_s_mean)} req/s, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms${bad}`;
}

async function countLoad(server: Parlance, cfg: { warmupSeconds: number; loadSeconds: number; connections: number }): Promise<LoadResult> {
  const url = `${server.url}/v1/files/count`;
  await load({ url, apiKey: server.apiKey, connections: cfg.connections, duration: cfg.warmupSeconds });
  return load({ url, apiKey: server.apiKey, connections: cfg.connections, duration: cfg.loadSeconds });
}

async function uploadMany(server: Parlance, file: string, n: number, concurrency: number) {
  const bytes = await readFile(file);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const form = new FormData();
      form.append('file', new Blob([bytes], { type: 'audio/wav' }), `tiny-${i}.wav`);
      const t0 = performance.now();
      const res = await server.request('/v1/files', { method: 'POST', body: form });
      const body = await res.text();
      latencies.push(performance.now() - t0);
      if (res.status !== 201) throw new Error(`upload ${i}: HTTP ${res.status} ${body}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const count = (await (await server.request('/v1/files/count')).json()) as { total: number };
  if (count.total !== n) throw new Error(`expected ${n} files after uploading, count says ${count.total}`);
  return { files: n, file_bytes: bytes.length, concurrency, seconds: round(seconds, 2), files_per_s: round(n / seconds, 1), latency_ms: summarize(latencies) };
}

async function listSequential(server: Parlance, files: number, n: number) {
  const once = async () => {
    const t0 = performance.now();
    const res = await server.request('/v1/files?limit=1000');
    const body = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`list: HTTP ${res.status} ${body.toString()}`);
    return { ms, body };
  };
  const first = await once();
  const page = JSON.parse(first.body.toString()) as { files: unknown[]; next_page_cursor: string | null };
  if (page.files.length !== Math.min(files, 1000)) throw new Error(`list returned ${page.files.length} files, expected ${files}`);
  for (let i = 0; i < 20; i++) await once(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push((await once()).ms);
  return { requests: n, files_in_page: page.files.length, response_bytes: first.body.length, latency_ms: summarize(samples) };
}

/** A valid 16-bit mono 16 kHz PCM WAV of exactly `totalBytes` bytes (a 440 Hz tone), written in chunks. */
async function writeBigWav(file: string, totalBytes: number): Promise<void> {
  const rate = 16000;
  const dataBytes = (totalBytes - 44) & ~1;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  // One second of 440 Hz holds whole periods, so repeating it is seamless; 128 s per write.
  const second = Buffer.alloc(rate * 2);
  for (let i = 0; i < rate; i++) second.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const chunk = Buffer.concat(Array.from({ length: 128 }, () => second));
  const fh = await open(file, 'w');
  try {
    await fh.write(header);
    for (let left = dataBytes; left > 0; left -= chunk.length) await fh.write(chunk, 0, Math.min(left, chunk.length));
  } finally {
    await fh.close();
  }
}

interface PostResult {
  status: number;
  body: string;
}

/** POST `file` as multipart/form-data, streamed from disk with an exact Content-Length. */
async function streamUpload(url: string, apiKey: string, file: string, filename: string): Promise<PostResult> {
  const size = (await stat(file)).size;
  const boundary = `parlance-bench-${randomBytes(12).toString('hex')}`;
  const preamble = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: audio/wav\r\n\r\n`);
  const closing = Buffer.from(`\r\n--${boundary}--\r\n`);
  const req = http.request(`${url}/v1/files`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(preamble.length + size + closing.length),
    },
  });
  const response = new Promise<PostResult>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.once('error', reject);
    });
  });
  const send = pipeline(async function* () {
    yield preamble;
    for await (const chunk of createReadStream(file, { highWaterMark: MiB })) yield chunk as Buffer;
    yield closing;
  }, req);
  // An early answer (an error) may cut the upload short; the answer is what counts.
  const [sent, answer] = await Promise.allSettled([send, response]);
  if (answer.status === 'rejected') throw answer.reason;
  if (sent.status === 'rejected' && answer.value.status === 201) throw sent.reason;
  return answer.value;
}

async function bigUpload(opts: SuiteOptions, work: string, bytes: number) {
  const file = path.join(work, 'big.wav');
  opts.cleanup.add('remove big WAV', () => rm(file, { force: true }));
  opts.log(`writing a ${mib(bytes)} MiB WAV to ${file}`);
  await writeBigWav(file, bytes);
  const fileBytes = (await stat(file)).size;

  const server = await startServer(opts, {});
  const pid = findServerPid(server.dataDir);
  // Warm the upload path (multipart parser, ffprobe/ffmpeg spawn, SQLite statements) before the baseline.
  const warm = await makeAudio(path.join(work, 'warm.wav'), { seconds: 0.5 });
  const form = new FormData();
  form.append('file', new Blob([await readFile(warm)], { type: 'audio/wav' }), 'warm.wav');
  const w = await server.request('/v1/files', { method: 'POST', body: form });
  if (w.status !== 201) throw new Error(`warm-up upload: HTTP ${w.status} ${await w.text()}`);
  await new Promise((r) => setTimeout(r, 1000));

  const before = processMemory(pid);
  const samples: { t_ms: number; rss: number }[] = [];
  const clientRssBefore = process.memoryUsage().rss;
  let clientRssPeak = clientRssBefore;
  const t0 = performance.now();
  const timer = setInterval(() => {
    try {
      samples.push({ t_ms: Math.round(performance.now() - t0), rss: processMemory(pid).rss });
      clientRssPeak = Math.max(clientRssPeak, process.memoryUsage().rss);
    } catch {
      /* the process may be gone if it crashed; the upload reports that */
    }
  }, 100);
  let result: PostResult;
  try {
    opts.log(`uploading ${mib(fileBytes)} MiB to ${server.url} (server pid ${pid}), sampling VmRSS every 100 ms`);
    result = await streamUpload(server.url, server.apiKey, file, 'big.wav');
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = processMemory(pid);
  if (result.status !== 201) throw new Error(`big upload: HTTP ${result.status} ${result.body}`);
  const record = JSON.parse(result.body) as { id: string; size: number; filename: string };
  if (record.size !== fileBytes) throw new Error(`big upload: stored size ${record.size} != ${fileBytes}`);
  const sampledPeak = Math.max(before.rss, ...samples.map((s) => s.rss), after.rss);
  // VmHWM is the kernel's own peak; if it rose during the upload, it is the true peak of the upload.
  const peak = after.hwm > before.hwm ? Math.max(sampledPeak, after.hwm) : sampledPeak;
  await server.stop();
  await rm(file, { force: true });
  return {
    file_bytes: fileBytes,
    status: result.status,
    response: record,
    upload_seconds: round(seconds, 2),
    throughput_mb_per_s: round(fileBytes / 1e6 / seconds, 1),
    rss_baseline_bytes: before.rss,
    rss_peak_bytes: peak,
    rss_peak_sampled_bytes: sampledPeak,
    rss_after_bytes: after.rss,
    vm_hwm_before_bytes: before.hwm,
    vm_hwm_after_bytes: after.hwm,
    rss_growth_bytes: peak - before.rss,
    client_rss_before_bytes: clientRssBefore,
    client_rss_peak_bytes: clientRssPeak,
    rss_samples: samples,
  };
}
