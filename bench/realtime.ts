// Real-time STT suite (issues: Real-time transcription WebSocket; final tokens as accurate as async), against real
// `parlance serve` processes over /transcribe-websocket with the `ws` client, flite speech over a noise floor sent at
// real-time pace in 20 ms pieces (realtime-stream.ts):
//   1. first non-final token latency: from sending the piece where speech starts to the first non-final token
//      (target ≤ 300 ms)
//   2. finalization latency: from sending the piece where speech ends to the frame that makes the last word final
//      (p50 / p95, target p95 ≤ 1 s; includes the engine's 600 ms pause that ends an utterance), with the second pass
//      on (default) and off (before)
//   3. concurrent streams sustained while keeping up (realtime-sweep.ts), second pass on and off, and server RSS per
//      stream
//   4. token lag per audio format: pcm_s16le, wav, mp3, ogg-opus, webm-opus, flac (realtime-formats.ts)
//   5. cold start: a fresh server's first session against a warm one, preload on and off (realtime-cold.ts)
//   6. live final-token WER against async transcription (live-wer.ts): an engine-only, in-process figure, not the
//      product's (no server, socket, pacing or finalize; `npm run bench -- live` measures that)
import { execFile } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { startParlance, tempDir } from '../test/harness.js';
import { coldStart } from './realtime-cold.js';
import { collectLags, FORMATS, lagRows, lagSummary, measureFormats } from './realtime-formats.js';
import { CHUNK_MS, makeClip, stream, type StreamResult } from './realtime-stream.js';
import { sweep, type SweepResult } from './realtime-sweep.js';
import { liveWer } from './live-wer.js';
import { HARVARD_SENTENCES, benchServerEnv, findServerPid, mib, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';

const execFileP = promisify(execFile);

interface ServerRun {
  sequential: StreamResult[];
  sweep: SweepResult;
  formats?: Awaited<ReturnType<typeof measureFormats>>;
}

export async function run({ quick, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const dir = tempDir('parlance-bench-rt-');
  cleanup.add('remove temp dir', () => execFileP('rm', ['-rf', dir]));
  const clips = await Promise.all(Array.from({ length: quick ? 2 : HARVARD_SENTENCES.length }, (_, i) => makeClip(dir, i)));
  const formatClips = quick ? clips.slice(0, 1) : clips;
  const levels = quick ? [2, 4] : [1, 2, 4, 8, 12, 16, 24, 32].filter((n) => n <= 12 * os.availableParallelism());
  const coldRounds = quick ? 1 : 5;
  raw.config = { clips: clips.length, format_clips: formatClips.length, levels, cold_rounds: coldRounds, chunk_ms: CHUNK_MS };
  // Wall time of each part, and the machine's load after it (other work on the machine shows here).
  const phases: Record<string, { seconds: number; load_average_1m_after: number }> = {};
  raw.phases = phases;
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const out = await fn();
    phases[name] = { seconds: round((performance.now() - started) / 1000, 1), load_average_1m_after: round(os.loadavg()[0]!, 2) };
    return out;
  };

  /** Warm-up, sequential sessions, optionally the formats, then the concurrency sweep, on one fresh server. */
  const measure = async (secondPass: boolean): Promise<ServerRun> => {
    const s = await startParlance({
      env: benchServerEnv({
        PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '0',
        PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG: '0',
        PARLANCE_REALTIME_SECOND_PASS: String(secondPass),
        // The session-finished lines say how the second passes fared (a few lines per session).
        PARLANCE_LOG_LEVEL: 'info',
      }),
    });
    cleanup.add('stop server', () => s.stop());
    const wsUrl = `${s.url.replace('http', 'ws')}/transcribe-websocket`;
    const pid = findServerPid(s.dataDir);
    const tag = `second pass ${secondPass ? 'on' : 'off'}`;
    // Warm-up: the first session loads the model.
    await stream(wsUrl, s.apiKey, clips[0]!);
    log(`latency (${tag}): ${clips.length} sessions one after another at real-time pace`);
    const sequential: StreamResult[] = [];
    await timed(`sequential, ${tag}`, async () => {
      for (const clip of clips) sequential.push(await stream(wsUrl, s.apiKey, clip));
    });
    const formats = secondPass ? await timed('token lag per format', () => measureFormats(wsUrl, s.apiKey, dir, formatClips, log)) : undefined;
    log(`concurrency sweep (${tag})`);
    const swept = await timed(`concurrency sweep, ${tag}`, () => sweep({ wsUrl, apiKey: s.apiKey, pid, stderr: s.stderr }, clips, levels, log));
    await s.stop();
    return { sequential, sweep: swept, ...(formats ? { formats } : {}) };
  };
  const on = await timed('server, second pass on', () => measure(true));
  const off = await timed('server, second pass off', () => measure(false));

  const latency = (r: ServerRun) => {
    const firsts = r.sequential.map((x) => x.firstNonFinalMs).filter((v): v is number => v !== null);
    const finals = r.sequential.map((x) => x.finalizeMs).filter((v): v is number => v !== null);
    return { firsts, finals, fs: summarize(firsts), fz: summarize(finals) };
  };
  /** "p50 …, p95 …" of a summary, or "none" when it has no samples. */
  const p50p95 = (x: { count: number; p50: number; p95: number }) => (x.count ? `p50 ${round(x.p50, 0)} ms, p95 ${round(x.p95, 0)} ms` : 'none');
  const streams = (n: number) => `${n} stream${n === 1 ? '' : 's'}`;
  const a = latency(on);
  const b = latency(off);
  raw.second_pass_on = {
    sequential: on.sequential,
    first_non_final_ms: a.fs,
    finalization_ms: a.fz,
    concurrency: on.sweep.levels,
    idle_rss_mib: mib(on.sweep.idleRss),
  };
  raw.second_pass_off = {
    sequential: off.sequential,
    first_non_final_ms: b.fs,
    finalization_ms: b.fz,
    concurrency: off.sweep.levels,
    idle_rss_mib: mib(off.sweep.idleRss),
  };
  rows.push({
    benchmark: `first non-final token after speech starts (${a.firsts.length}/${clips.length} sessions, ${CHUNK_MS} ms chunks at real-time pace)`,
    result: a.fs.count ? `${p50p95(a.fs)}, max ${round(a.fs.max, 0)} ms` : 'none',
    target: '≤ 300 ms',
    met: a.firsts.length === clips.length && a.fs.p95 <= 300,
  });
  rows.push({
    benchmark: `finalization after speech ends, second pass on (${a.finals.length}/${clips.length} sessions; includes the 600 ms endpoint pause)`,
    result: p50p95(a.fz),
    target: 'p95 ≤ 1 s',
    met: a.finals.length === clips.length && a.fz.p95 <= 1000,
  });
  rows.push({
    benchmark: `finalization after speech ends, second pass off (before; ${b.finals.length}/${clips.length} sessions)`,
    result: p50p95(b.fz),
    target: '— (before)',
    met: null,
  });
  const kept = (r: SweepResult) =>
    `${streams(r.sustained)}${r.sustained === levels[levels.length - 1] ? ' (highest level tried)' : ''}` +
    (r.sustained ? `; finalization p95 at ${r.sustained}: ${round(r.finalizeP95AtSustained, 0)} ms` : '');
  rows.push({
    benchmark: `concurrent real-time streams keeping up, second pass on (first token p95 ≤ 1 s, finished ≤ 1.5 s after the end frame; ${os.availableParallelism()} cores)`,
    result: kept(on.sweep),
    target: '— (report)',
    met: null,
  });
  rows.push({ benchmark: 'concurrent real-time streams keeping up, second pass off (before)', result: kept(off.sweep), target: '— (before)', met: null });
  rows.push({
    benchmark: `server memory per stream (RSS peak above idle ${mib(on.sweep.idleRss)} MiB, at ${streams(on.sweep.sustained)}, second pass on)`,
    result: on.sweep.sustained ? `${mib(on.sweep.rssPerStream)} MiB` : 'no level kept up',
    target: '— (report)',
    met: null,
  });

  const pcmLags = collectLags(on.sequential);
  raw.token_lag = Object.fromEntries(Object.entries({ pcm_s16le: pcmLags, ...on.formats }).map(([k, v]) => [k, { summary: lagSummary(v), ...v }]));
  rows.push(...lagRows('pcm_s16le 16 kHz mono', pcmLags));
  for (const f of FORMATS) rows.push(...lagRows(`${f.name} (auto)`, on.formats![f.name]!));

  const cold = await timed('cold start', () => coldStart(clips, coldRounds, cleanup, log));
  raw.cold_start = cold.raw;
  rows.push(...cold.rows);

  log('engine-only, in-process accuracy: final tokens of live sessions against file transcription of the same real recordings');
  const wer = await timed('live WER', () => liveWer());
  raw.live_wer = wer;
  const pct = (k: string) => `${round(wer[k]!.wer * 100, 1)} % (${wer[k]!.errors}/${wer[k]!.words})`;
  rows.push({
    benchmark: 'engine-only, in-process WER (not through the server): async transcription of the 10 pocketsphinx-testdata recordings',
    result: pct('async'),
    target: '— (reference)',
    met: null,
  });
  for (const mode of ['one-pass', 'two-pass']) {
    for (const layout of ['clip per session', 'all clips in one session']) {
      const key = `live ${mode}, ${layout}`;
      const twoPass = mode === 'two-pass';
      rows.push({
        benchmark: `engine-only, in-process WER (not through the server): live final tokens, ${mode}, ${layout}`,
        result: pct(key),
        target: twoPass ? '≤ async + 2 points' : '— (before)',
        met: twoPass ? wer[key]!.wer <= wer.async!.wer + 0.02 : null,
      });
    }
  }
  return { rows, raw };
}
