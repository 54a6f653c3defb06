// Mixed-load suite (issue: "A load benchmark with the mixed load"). One real `parlance serve` (fresh data dir,
// embedded SQLite, models preloaded, the default per-minute and concurrency limits left on: a refusal is part of what is
// measured) under an open-loop load for 60 s (15 s with --quick): requests leave on a fixed schedule whatever the
// server answers, so a slow server does not lower the offered rate, each with a 30 s client timeout:
//   - 2/s   POST /v1/files (flite speech, 3-6 s WAV)
//   - 1/s   POST /v1/transcriptions (stt-async-v4, a file uploaded before or during the run; the create is timed, and
//           after the run how many of the jobs completed)
//   - 2/s   POST /tts (three Harvard sentences, body read to the end: first byte and total)
//   - 5/s   list calls: GET /v1/files?limit=20 and GET /v1/transcriptions?limit=20, 2.5/s each
//   - 5/s   GET /health (no key)
//   - 3     live sessions on /transcribe-websocket for the whole run, speech with 1.5 s pauses over a noise floor at
//           real-time pace in 20 ms pieces (stream() of realtime-stream.ts), token lag of the non-final new words
// Per endpoint: sent, 2xx, 429s (each checked for Retry-After and a documented error body with `limit_exceeded`: the
// REST shape, or POST /tts's own), other statuses, timeouts, p50 / p99 of answered and of 2xx requests. Targets: /health
// and the list calls p99 ≤ 100 ms, every live stream keeping real time (new-word lag p95 ≤ 1 s), any refusal a fast
// (p99 ≤ 100 ms) well-formed 429, no timeouts or other errors. Also the server's event-loop delay from GET /metrics when
// it exists (sampled every 2 s), its CPU seconds per wall second (and its exited child processes', the machine's), what
// its main thread is doing (sampled from /proc), errors it logged, and the bench client's own event-loop delay and
// schedule slip (a late client would inflate the server's numbers).
import { rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { makeSpeech, type Parlance, startParlance, tempDir, transcribeFile, uploadFile } from '../test/harness.js';
import { benchServerEnv, findServerPid, HARVARD_SENTENCES, processCpuSeconds, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';
import { BYTES_PER_MS, type Clip, makeClip, stream, type StreamResult } from './realtime-stream.js';

const TIMEOUT_MS = 30_000;
const FAST_P99_MS = 100;
const LAG_P95_MS = 1000;
const LIVE_STREAMS = 3;
const METRICS_EVERY_MS = 2000;
const TTS = 'POST /tts (3 sentences, whole body)';
/** Pause after each sentence of a live stream's audio (the clips have 1 s of noise before the speech). */
const LIVE_TAIL_MS = 500;

interface Outcome {
  kind: string;
  /** Send time from the start of the load (ms). */
  at_ms: number;
  /** null: timeout or network error before the status line. */
  status: number | null;
  /** To the end of the response body, or to the failure. */
  ms: number;
  ttfb_ms?: number;
  error?: string;
  /** 429 only: the Retry-After header, and whether the body is a documented error shape with `limit_exceeded`. */
  retry_after?: string | null;
  well_formed?: boolean;
}

interface Kind {
  name: string;
  perSecond: number;
  /** Held to p99 ≤ 100 ms. */
  fast: boolean;
  request(n: number): { path: string; init?: RequestInit & { key?: string | null }; onOk?: (body: Buffer) => void };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (n: number) => (Number.isFinite(n) ? String(round(n, 1)) : '—');

/** The documented error bodies: the REST one (src/wire/rest-error.ts) and POST /tts's (src/modules/tts/schemas.ts). */
const ERROR_KEYS = {
  rest: 'error_type,message,more_info,request_id,status_code,validation_errors',
  tts: 'error_code,error_message,error_type,more_info,request_id',
};

/** A 429 body is well-formed when it has exactly one documented shape, says 429 and `limit_exceeded`. */
function wellFormed429(text: string): boolean {
  try {
    const b = JSON.parse(text) as Record<string, unknown>;
    const keys = Object.keys(b).sort().join(',');
    return b.error_type === 'limit_exceeded' && ((keys === ERROR_KEYS.rest && b.status_code === 429) || (keys === ERROR_KEYS.tts && b.error_code === 429));
  } catch {
    return false;
  }
}

/** One request with the client timeout, body read to the end (kept when `keep`), 429s checked. */
async function call(
  s: Parlance,
  kind: string,
  atMs: number,
  path_: string,
  init: RequestInit & { key?: string | null } = {},
  keep = false,
): Promise<Outcome & { body?: Buffer }> {
  const t = performance.now();
  const o: Outcome = { kind, at_ms: round(atMs, 1), status: null, ms: 0 };
  try {
    const res = await s.request(path_, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    o.status = res.status;
    if (res.status === 429) {
      o.retry_after = res.headers.get('retry-after');
      const text = await res.text();
      o.well_formed = wellFormed429(text);
      if (!o.well_formed) o.error = `429 body: ${text.slice(0, 300)}`;
      o.ms = round(performance.now() - t, 2);
      return o;
    }
    const chunks: Buffer[] = [];
    const reader = res.body?.getReader();
    if (reader)
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        o.ttfb_ms ??= round(performance.now() - t, 2);
        if (keep) chunks.push(Buffer.from(r.value));
      }
    o.ms = round(performance.now() - t, 2);
    return keep ? { ...o, body: Buffer.concat(chunks) } : o;
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    o.error = e.name === 'TimeoutError' ? 'timeout' : (e.cause?.code ?? e.cause?.message ?? e.message);
    o.ms = round(performance.now() - t, 2);
    return o;
  }
}

/** `clips` (speech over noise) one after another, each cut 0.5 s after its speech, cut to `totalMs`. */
function liveClip(clips: Clip[], first: number, totalMs: number): Clip {
  const parts: Buffer[] = [];
  let len = 0;
  for (let i = first; len < totalMs * BYTES_PER_MS; i++) {
    const c = clips[i % clips.length]!;
    const part = c.pcm.subarray(0, Math.min(c.pcm.length, Math.round(c.speechEndMs + LIVE_TAIL_MS) * BYTES_PER_MS));
    parts.push(part);
    len += part.length;
  }
  const pcm = Buffer.concat(parts).subarray(0, totalMs * BYTES_PER_MS);
  // speechEndMs only serves stream()'s finalization latency, which is not reported here.
  return { pcm, speechStartMs: clips[first % clips.length]!.speechStartMs, speechEndMs: totalMs };
}

/** CPU seconds of a process's exited, reaped children (TTS engines, ffmpeg): cutime + cstime of /proc/<pid>/stat. */
function childCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100;
}

/** The machine's busy and total CPU time so far (clock ticks, /proc/stat; idle and iowait are not busy). */
function machineCpuTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

/**
 * What the server's main thread is doing now (Linux /proc, as root or the same user): running or runnable, idle in epoll (the event
 * loop waiting for work), blocked in a pipe read() (libuv's spawn waits so for a child to exec), or another syscall.
 */
function mainThreadState(pid: number): string {
  try {
    const syscall = readFileSync(`/proc/${pid}/task/${pid}/syscall`, 'utf8').split(' ')[0]!.trim();
    if (syscall === 'running') return 'on or waiting for a CPU';
    if (['232', '281', '441'].includes(syscall)) return 'idle in epoll';
    const wchan = readFileSync(`/proc/${pid}/task/${pid}/wchan`, 'utf8');
    return wchan.includes('pipe_read') ? 'blocked in pipe read' : `syscall ${syscall}${wchan && wchan !== '0' ? ` (${wchan})` : ''}`;
  } catch {
    return 'unreadable';
  }
}

/** Event-loop gauges of a Prometheus text page, in ms (`…_seconds` converted and renamed `…_ms`). */
function eventLoopGauges(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w*event_?loop\w*?)(?:\{[^}]*\})?\s+(\S+)/i.exec(line);
    if (m && Number.isFinite(Number(m[2]))) out[m[1]!.replace(/_seconds$/, '_ms')] = Number(m[2]) * (m[1]!.endsWith('_seconds') ? 1000 : 1);
  }
  return out;
}

function endpointRow(kind: Kind, outs: Outcome[]): { row: Row; raw: Record<string, unknown> } {
  // A timeout counts as such even after the status line came (a body cut at 30 s); an answered request got its body.
  const timeouts = outs.filter((o) => o.error === 'timeout').length;
  const answered = outs.filter((o) => o.status !== null && o.error !== 'timeout');
  const ok = answered.filter((o) => o.status! >= 200 && o.status! < 300 && !o.error);
  const refused = answered.filter((o) => o.status === 429);
  const other: Record<string, number> = {};
  for (const o of outs) {
    if (o.error === 'timeout' || o.status === 429 || ok.includes(o)) continue;
    const key = [o.status, o.error].filter((x) => x != null).join(' ');
    other[key] = (other[key] ?? 0) + 1;
  }
  const otherCount = Object.values(other).reduce((a, b) => a + b, 0);
  const all = summarize(answered.map((o) => o.ms));
  const okLat = summarize(ok.map((o) => o.ms));
  const refusedLat = summarize(refused.map((o) => o.ms));
  const refusedOk = refused.filter((o) => o.retry_after && o.well_formed).length;
  const raw = {
    per_second: kind.perSecond,
    sent: outs.length,
    ok: ok.length,
    refused_429: refused.length,
    refused_429_with_retry_after: refused.filter((o) => o.retry_after).length,
    refused_429_well_formed: refused.filter((o) => o.well_formed).length,
    refused_429_ms: refused.length ? refusedLat : null,
    other_errors: other,
    timeouts,
    latency_ms: answered.length ? all : null,
    latency_2xx_ms: ok.length ? okLat : null,
    ...(kind.name === TTS && ok.length ? { ttfb_2xx_ms: summarize(ok.map((o) => o.ttfb_ms ?? o.ms)) } : {}),
  };
  const refusals = refused.length
    ? `${refused.length} × 429 (${raw.refused_429_with_retry_after} Retry-After, ${raw.refused_429_well_formed} limit_exceeded body, p99 ${ms(refusedLat.p99)} ms)`
    : '0 × 429';
  const others = otherCount
    ? `${otherCount} other (${Object.entries(other)
        .map(([k, v]) => `${k} × ${v}`)
        .join(', ')})`
    : '0 other';
  const row: Row = {
    benchmark: `${kind.name}, ${kind.perSecond}/s: sent; p50 / p99 answered (2xx)`,
    result: `${outs.length} sent: ${ok.length} ok, ${refusals}, ${others}, ${timeouts} timeouts; ${ms(all.p50)} / ${ms(all.p99)} ms (${ms(okLat.p50)} / ${ms(okLat.p99)})`,
    target: `${kind.fast ? `p99 ≤ ${FAST_P99_MS} ms; ` : ''}no timeout or other error; 429s fast, well-formed`,
    met:
      timeouts === 0 &&
      otherCount === 0 &&
      refusedOk === refused.length &&
      (!refused.length || refusedLat.p99 <= FAST_P99_MS) &&
      (!kind.fast || (answered.length > 0 && all.p99 <= FAST_P99_MS)),
  };
  return { row, raw };
}

export async function run(opts: SuiteOptions): Promise<SuiteResult> {
  // --flood=<factor>: uploads, transcriptions and TTS at that many times their rate, cheap requests unchanged, so the
  // per-node limits refuse some of them: what the cheap requests and the refusals cost in a flood.
  const flood = opts.args.flood === undefined ? 1 : Number(opts.args.flood);
  if (!(flood >= 1 && flood <= 20)) throw new Error(`--flood takes a factor from 1 to 20, not ${opts.args.flood}`);
  const cfg = {
    seconds: opts.quick ? 15 : 60,
    timeout_ms: TIMEOUT_MS,
    live_streams: LIVE_STREAMS,
    upload_clips: opts.quick ? 3 : 6,
    live_clips: 6,
    flood,
  };
  const rows: Row[] = [];
  const raw: Record<string, unknown> = { config: cfg };
  const work = tempDir('parlance-bench-load-');
  opts.cleanup.add('remove bench temp dir', () => rm(work, { recursive: true, force: true }));

  // Inputs: two-sentence flite WAVs to upload, flite sentences over noise for the live streams, TTS paragraphs.
  opts.log(`preparing ${cfg.upload_clips} upload clips and ${cfg.live_clips} live-stream sentences`);
  const sentence = (i: number) => HARVARD_SENTENCES[i % HARVARD_SENTENCES.length]!;
  const wavs = await Promise.all(
    Array.from({ length: cfg.upload_clips }, (_, i) => makeSpeech(path.join(work, `upload-${i}.wav`), `${sentence(2 * i)}. ${sentence(2 * i + 1)}.`)),
  );
  const wavBytes = wavs.map((f) => readFileSync(f));
  const clips = await Promise.all(Array.from({ length: cfg.live_clips }, (_, i) => makeClip(work, i)));
  const ttsTexts = Array.from({ length: 5 }, (_, i) =>
    [0, 1, 2]
      .map((k) => sentence(3 * i + k))
      .map((x) => `${x.charAt(0).toUpperCase()}${x.slice(1)}.`)
      .join(' '),
  );

  // The default limits stay (benchServerEnv's lifted per-minute limits do not): this load is under all of them.
  const env = Object.fromEntries(Object.entries(benchServerEnv({ PARLANCE_STT_PRELOAD: 'true' })).filter(([k]) => !k.startsWith('PARLANCE_RATE_')));
  const s = await startParlance({ env });
  opts.cleanup.add(`stop server ${s.url}`, () => s.stop());
  const pid = findServerPid(s.dataDir);
  const wsUrl = `${s.url.replace('http', 'ws')}/transcribe-websocket`;

  // Warm-up: a transcription to the end, a TTS request, live sessions as many as the load runs.
  opts.log('warm-up: a transcription, a TTS request, 3 live sessions');
  const preUploaded = await Promise.all(wavs.map((f) => uploadFile(s, f)));
  await Promise.all([
    transcribeFile(s, wavs[0]!),
    call(s, 'warm-up', 0, '/tts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'pcm_s16le', text: ttsTexts[0] }),
    }),
    ...clips.slice(0, LIVE_STREAMS).map((c) => stream(wsUrl, s.apiKey, c)),
  ]);

  // The load.
  const uploaded: string[] = [];
  const jobs: string[] = [];
  const json = { 'content-type': 'application/json' };
  const kinds: Kind[] = [
    {
      name: 'POST /v1/files',
      perSecond: 2 * flood,
      fast: false,
      request: (n) => {
        const form = new FormData();
        form.set('file', new Blob([wavBytes[n % wavBytes.length]!]), `load-${n}.wav`);
        return { path: '/v1/files', init: { method: 'POST', body: form }, onOk: (b) => void uploaded.push((JSON.parse(b.toString()) as { id: string }).id) };
      },
    },
    {
      name: 'POST /v1/transcriptions (create)',
      perSecond: 1 * flood,
      fast: false,
      request: (n) => ({
        path: '/v1/transcriptions',
        init: {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ model: 'stt-async-v4', file_id: uploaded.at(-1) ?? preUploaded[n % preUploaded.length] }),
        },
        onOk: (b) => void jobs.push((JSON.parse(b.toString()) as { id: string }).id),
      }),
    },
    {
      name: TTS,
      perSecond: 2 * flood,
      fast: false,
      request: (n) => ({
        path: '/tts',
        init: {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ model: 'tts-rt-v2', language: 'en', voice: 'Adrian', audio_format: 'pcm_s16le', text: ttsTexts[n % ttsTexts.length] }),
        },
      }),
    },
    { name: 'GET /v1/files?limit=20', perSecond: 2.5, fast: true, request: () => ({ path: '/v1/files?limit=20' }) },
    { name: 'GET /v1/transcriptions?limit=20', perSecond: 2.5, fast: true, request: () => ({ path: '/v1/transcriptions?limit=20' }) },
    { name: 'GET /health (no key)', perSecond: 5, fast: true, request: () => ({ path: '/health', init: { key: null } }) },
  ];
  const arrivals = kinds
    .flatMap((kind, i) =>
      Array.from({ length: Math.floor(cfg.seconds * kind.perSecond) }, (_, n) => ({ at: ((n + i / kinds.length) * 1000) / kind.perSecond, kind, n })),
    )
    .sort((a, b) => a.at - b.at);

  // Server event-loop delay from GET /metrics, if the server has it.
  const probe = await call(s, 'metrics', 0, '/metrics', {}, true);
  const metricsOn = probe.status === 200 && Object.keys(eventLoopGauges(probe.body!.toString())).length > 0;
  const metricSamples: { at_ms: number; gauges: Record<string, number> }[] = [];
  const metricFailures: Outcome[] = [];
  let emptyScrapes = 0;

  opts.log(
    `load: ${cfg.seconds} s, ${arrivals.length} requests on a fixed schedule, ${LIVE_STREAMS} live streams; GET /metrics ${metricsOn ? 'sampled' : `absent (${probe.status ?? probe.error})`}`,
  );
  const clientDelay = monitorEventLoopDelay({ resolution: 10 });
  clientDelay.enable();
  opts.cleanup.add('stop client event-loop monitor', () => clientDelay.disable());
  const logFrom = s.stderr().length;
  const t0 = performance.now();
  const cpuSample = () => ({ server: processCpuSeconds(pid), children: childCpuSeconds(pid), machine: machineCpuTicks(), client: process.cpuUsage() });
  const cpu0 = cpuSample();
  const cpuAtEnd = new Promise<ReturnType<typeof cpuSample>>((resolve) => setTimeout(() => resolve(cpuSample()), cfg.seconds * 1000));
  let sampler: NodeJS.Timeout | undefined;
  if (metricsOn) {
    sampler = setInterval(() => {
      const at = performance.now() - t0;
      void call(s, 'metrics', at, '/metrics', {}, true).then((o) => {
        if (o.status !== 200) return void metricFailures.push(o);
        const gauges = eventLoopGauges(o.body!.toString());
        // prom-client resets its histogram at each scrape: min > max (int64 max vs 0) is an interval without a sample.
        const min = Object.entries(gauges).find(([k]) => k.includes('_min'))?.[1];
        const max = Object.entries(gauges).find(([k]) => k.includes('_max'))?.[1];
        if (min !== undefined && max !== undefined && min > max) emptyScrapes++;
        else metricSamples.push({ at_ms: round(at, 0), gauges });
      });
    }, METRICS_EVERY_MS);
    opts.cleanup.add('stop /metrics sampler', () => clearInterval(sampler));
  }
  const threadStates: Record<string, number> = {};
  const threadSampler = setInterval(() => {
    const st = mainThreadState(pid);
    threadStates[st] = (threadStates[st] ?? 0) + 1;
  }, 50);
  opts.cleanup.add('stop main-thread sampler', () => clearInterval(threadSampler));
  const live = Array.from({ length: LIVE_STREAMS }, (_, i) =>
    stream(wsUrl, s.apiKey, liveClip(clips, 2 * i, cfg.seconds * 1000)).catch((err: Error): StreamResult => ({
      firstNonFinalMs: null,
      finalizeMs: null,
      finishMs: NaN,
      nonFinalLagMs: [],
      nonFinalRevisionLagMs: [],
      finalLagMs: [],
      finalAfterEndpointMs: [],
      error: err.message,
    })),
  );
  const outcomes: Outcome[] = [];
  const inFlight: Promise<void>[] = [];
  const slip: number[] = [];
  for (const a of arrivals) {
    const wait = t0 + a.at - performance.now();
    if (wait > 0) await sleep(wait);
    const now = performance.now() - t0;
    slip.push(now - a.at);
    const req = a.kind.request(a.n);
    inFlight.push(
      call(s, a.kind.name, now, req.path, req.init, !!req.onOk).then(({ body, ...o }) => {
        outcomes.push(o);
        if (o.status !== null && o.status >= 200 && o.status < 300 && body) {
          try {
            req.onOk!(body);
          } catch (err) {
            o.error = `unreadable 2xx body: ${(err as Error).message}`;
          }
        }
      }),
    );
  }
  const cpu1 = await cpuAtEnd;
  clearInterval(sampler);
  clearInterval(threadSampler);
  await Promise.all(inFlight);
  const streams = await Promise.all(live);
  clientDelay.disable();
  const loadEnd = performance.now();
  opts.log(`load done; in-flight requests answered and live streams finished ${round((loadEnd - t0) / 1000 - cfg.seconds, 1)} s after the schedule ended`);

  // How many of the created transcriptions complete (polled once a second, up to 2 min; 30 s with --quick).
  const drainLimitMs = opts.quick ? 30_000 : 120_000;
  const status = new Map<string, string>(jobs.map((id) => [id, 'created']));
  const terminal = (st: string) => st === 'completed' || st === 'error' || st === 'failed';
  let drainedAfterMs: number | null = null;
  for (;;) {
    await Promise.all(
      [...status]
        .filter(([, st]) => !terminal(st))
        .map(async ([id]) => {
          const r = await s.request(`/v1/transcriptions/${id}`).catch(() => null);
          if (r?.status === 200) status.set(id, ((await r.json()) as { status: string }).status);
        }),
    );
    if ([...status.values()].every(terminal)) {
      drainedAfterMs = performance.now() - loadEnd;
      break;
    }
    if (performance.now() - loadEnd > drainLimitMs) break;
    await sleep(1000);
  }
  const jobStates: Record<string, number> = {};
  for (const st of status.values()) jobStates[st] = (jobStates[st] ?? 0) + 1;

  // Rows: one per endpoint kind.
  const endpoints: Record<string, unknown> = {};
  for (const kind of kinds) {
    const r = endpointRow(
      kind,
      outcomes.filter((o) => o.kind === kind.name),
    );
    rows.push(r.row);
    endpoints[kind.name] = r.raw;
  }
  raw.endpoints = endpoints;
  const tts = outcomes.filter((o) => o.kind === TTS && o.status === 200);
  if (tts.length) {
    const st = summarize(tts.map((o) => o.ttfb_ms ?? o.ms));
    rows.push({
      benchmark: 'POST /tts under load: first audio byte (p50 / p99, 2xx)',
      result: `${ms(st.p50)} / ${ms(st.p99)} ms`,
      target: '(info)',
      met: null,
    });
  }
  raw.transcriptions_after_load = {
    created: jobs.length,
    states: jobStates,
    all_terminal_after_ms: drainedAfterMs === null ? null : round(drainedAfterMs, 0),
    waited_up_to_ms: drainLimitMs,
  };
  rows.push({
    benchmark: 'transcriptions created during the load: state afterwards',
    result: `${jobs.length} created: ${
      Object.entries(jobStates)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ') || '—'
    }${drainedAfterMs === null ? ` (not all done ${drainLimitMs / 1000} s after the load)` : ` (all done ${round(drainedAfterMs / 1000, 1)} s after the load)`}`,
    target: '(info)',
    met: null,
  });

  // Live streams.
  const perStream = streams.map((r) => {
    const st = r.nonFinalLagMs.length ? summarize(r.nonFinalLagMs) : null;
    return {
      kept_up: !r.error && st !== null && st.p95 <= LAG_P95_MS,
      error: r.error ?? null,
      new_word_lag_ms: st,
      revision_lag_ms: r.nonFinalRevisionLagMs.length ? summarize(r.nonFinalRevisionLagMs) : null,
      final_lag_ms: r.finalLagMs.length ? summarize(r.finalLagMs) : null,
      finish_ms: round(r.finishMs, 0),
    };
  });
  raw.live_streams = perStream;
  const allLags = streams.flatMap((r) => r.nonFinalLagMs);
  const lag = allLags.length ? summarize(allLags) : null;
  const kept = perStream.filter((p) => p.kept_up).length;
  const errors = perStream.filter((p) => p.error).map((p) => p.error);
  rows.push({
    benchmark: `${LIVE_STREAMS} live streams × ${cfg.seconds} s at real-time pace: non-final new-word lag p50 / p95 / max`,
    result: lag
      ? `${ms(lag.p50)} / ${ms(lag.p95)} / ${ms(lag.max)} ms; kept up ${kept}/${LIVE_STREAMS} (per-stream p95 ${perStream.map((p) => ms(p.new_word_lag_ms?.p95 ?? NaN)).join(', ')} ms)${errors.length ? `; errors: ${errors.join(', ')}` : ''}`
      : `no non-final tokens${errors.length ? `; errors: ${errors.join(', ')}` : ''}`,
    target: `each stream lag p95 ≤ ${LAG_P95_MS} ms, no error`,
    met: kept === LIVE_STREAMS,
  });

  // Server event-loop delay, CPU, logged errors.
  if (metricsOn && metricSamples.length) {
    const names = Object.keys(metricSamples[0]!.gauges);
    const preferred = names.filter((n) => /p99|max/.test(n));
    const gauges: Record<string, ReturnType<typeof summarize>> = {};
    for (const n of names) gauges[n] = summarize(metricSamples.map((m) => m.gauges[n]).filter((v): v is number => v !== undefined));
    raw.server_event_loop_ms = { gauges, samples: metricSamples, empty_scrapes: emptyScrapes, scrape_failures: metricFailures };
    rows.push({
      benchmark: `server event-loop delay (GET /metrics every ${METRICS_EVERY_MS / 1000} s, ${metricSamples.length} samples): median / max`,
      result:
        (preferred.length ? preferred : names).map((n) => `${n} ${ms(gauges[n]!.p50)} / ${ms(gauges[n]!.max)} ms`).join('; ') +
        (emptyScrapes ? `; ${emptyScrapes} scrapes without a sample` : '') +
        (metricFailures.length ? `; ${metricFailures.length} scrapes failed` : ''),
      target: '(info)',
      met: null,
    });
  } else {
    raw.server_event_loop_ms = {
      available: false,
      probe_status: probe.status,
      probe_error: probe.error ?? null,
      empty_scrapes: emptyScrapes,
      scrape_failures: metricFailures,
    };
    rows.push({
      benchmark: 'server event-loop delay (GET /metrics)',
      result: `n/a (GET /metrics: ${probe.status ?? probe.error}${metricsOn ? ', no sample' : ''})`,
      target: '(info)',
      met: null,
    });
  }
  const perSecond = (a: number, b: number) => round((b - a) / cfg.seconds, 2);
  const cpu = {
    server_process: perSecond(cpu0.server, cpu1.server),
    server_children_reaped: perSecond(cpu0.children, cpu1.children),
    bench_client: perSecond(0, (cpu1.client.user + cpu1.client.system - cpu0.client.user - cpu0.client.system) / 1e6),
    machine_busy_fraction: round((cpu1.machine.busy - cpu0.machine.busy) / (cpu1.machine.total - cpu0.machine.total), 3),
    cores: os.availableParallelism(),
  };
  raw.cpu_per_wall_second = cpu;
  rows.push({
    benchmark: 'CPU-s per wall s during the load: server (all threads) / its exited child processes / bench client; machine busy',
    result: `${cpu.server_process} / ${cpu.server_children_reaped} / ${cpu.bench_client}; ${round(cpu.machine_busy_fraction * 100, 0)} % of ${cpu.cores} cores`,
    target: '(info)',
    met: null,
  });
  const threadSamples = Object.values(threadStates).reduce((a, b) => a + b, 0);
  const threadShares = Object.entries(threadStates).sort((a, b) => b[1] - a[1]);
  raw.server_main_thread_samples = { every_ms: 50, counts: threadStates };
  rows.push({
    benchmark: `server main thread during the load (/proc, ${threadSamples} samples every 50 ms)`,
    result: threadShares
      .slice(0, 4)
      .map(([k, v]) => `${k} ${round((v / threadSamples) * 100, 0)} %`)
      .join(', '),
    target: '(info: blocked = event loop stalled)',
    met: null,
  });
  const logged = s
    .stderr()
    .slice(logFrom)
    .split('\n')
    .flatMap((line) => {
      try {
        const l = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
        return (l.level ?? 0) >= 50 ? [`${l.msg ?? ''}${l.err?.message ? `: ${l.err.message}` : ''}`] : [];
      } catch {
        return line.trim() ? [line.slice(0, 300)] : [];
      }
    });
  raw.server_logged_errors = { count: logged.length, first: logged.slice(0, 20) };
  rows.push({
    benchmark: 'server errors logged during the load (level ≥ error)',
    result: logged.length ? `${logged.length} (first: ${logged[0]!.slice(0, 120)})` : '0',
    target: '(info)',
    met: null,
  });
  const slipStats = summarize(slip);
  raw.client = {
    schedule_slip_ms: slipStats,
    event_loop_delay_ms: {
      p50: round(clientDelay.percentile(50) / 1e6, 2),
      p99: round(clientDelay.percentile(99) / 1e6, 2),
      max: round(clientDelay.max / 1e6, 2),
    },
  };
  rows.push({
    benchmark: 'bench client: send-schedule slip p99 / max; own event-loop delay p99',
    result: `${ms(slipStats.p99)} / ${ms(slipStats.max)} ms; ${ms(clientDelay.percentile(99) / 1e6)} ms`,
    target: '(info: large values skew the numbers above)',
    met: null,
  });
  raw.requests = outcomes.sort((a, b) => a.at_ms - b.at_ms);
  await s.stop();
  return { rows, raw };
}
