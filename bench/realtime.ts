// Real-time STT suite (issue: Real-time transcription WebSocket), against a real `parlance serve` process over
// /transcribe-websocket with the `ws` client, flite speech sent as pcm_s16le at real-time pace in 20 ms chunks:
//   1. first non-final token latency: from sending the chunk where speech starts to the first non-final token
//      (target ≤ 300 ms)
//   2. finalization latency: from sending the chunk where speech ends to the frame that makes the last word final
//      (p50 / p95, target p95 ≤ 1 s; includes the engine's 600 ms pause that ends an utterance)
//   3. concurrent streams sustained while keeping up (every stream's finished frame within 1.5 s of its end frame,
//      first-token latency p95 ≤ 1 s), and server RSS per stream
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import WebSocket from 'ws';
import { startParlance, tempDir } from '../test/harness.js';
import { liveWer } from './live-wer.js';
import { HARVARD_SENTENCES, benchServerEnv, findServerPid, mib, processCpuSeconds, processMemory, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';

const execFileP = promisify(execFile);
const CHUNK_MS = 20;
const BYTES_PER_MS = 32;
const SENTENCES = HARVARD_SENTENCES;
/** Peak amplitude of the clips' background noise: -60 dBFS RMS. */
const NOISE_AMPLITUDE = 0.005;

interface Clip {
  pcm: Buffer;
  speechStartMs: number;
  speechEndMs: number;
}

interface StreamResult {
  firstNonFinalMs: number | null;
  finalizeMs: number | null;
  /** From the empty end frame to the finished frame. */
  finishMs: number;
  error?: string;
}

/** Speech onset and end: first and last 10 ms window with a peak above -30 dBFS. */
function speechBounds(pcm: Buffer): { start: number; end: number } {
  let start = -1;
  let end = 0;
  for (let w = 0; w + 320 <= pcm.length; w += 320) {
    let peak = 0;
    for (let i = w; i < w + 320; i += 2) peak = Math.max(peak, Math.abs(pcm.readInt16LE(i)));
    if (peak > 1000) {
      if (start < 0) start = w / BYTES_PER_MS;
      end = (w + 320) / BYTES_PER_MS;
    }
  }
  return { start: Math.max(0, start), end };
}

/**
 * One sentence as a speaker's turn: 1 s before it, 2 s after it, over a microphone's noise floor (pink noise,
 * -60 dBFS RMS) rather than digital silence, which no live source sends and which a decoder gets through unrealistically
 * cheaply.
 */
async function makeClip(dir: string, i: number): Promise<Clip> {
  const wav = path.join(dir, `s${i}.wav`);
  await execFileP('flite', ['-voice', 'slt', '-t', SENTENCES[i % SENTENCES.length]!, '-o', wav]);
  const { stdout } = await execFileP(
    'ffmpeg',
    [
      '-nostdin', '-v', 'error', '-i', wav,
      '-f', 'lavfi', '-i', `anoisesrc=color=pink:amplitude=${NOISE_AMPLITUDE}:sample_rate=16000:seed=${i + 1}`,
      '-filter_complex', '[0]aresample=16000,adelay=1000,apad=pad_dur=2[s];[s][1]amix=inputs=2:duration=first:normalize=0',
      '-ac', '1', '-f', 's16le', '-',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 2 ** 20 },
  );
  const pcm = stdout;
  const { start, end } = speechBounds(pcm);
  return { pcm, speechStartMs: start, speechEndMs: end };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One session at real-time pace; latencies measured against the send time of the relevant chunk. */
async function stream(wsUrl: string, apiKey: string, clip: Clip): Promise<StreamResult> {
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let speechStartSentAt: number | undefined;
  let speechEndSentAt: number | undefined;
  let firstNonFinalMs: number | null = null;
  let finalizeMs: number | null = null;
  let endSentAt = 0;
  let error: string | undefined;
  const finished = new Promise<number>((resolve) => {
    ws.on('message', (data) => {
      const now = performance.now();
      const f = JSON.parse((data as Buffer).toString('utf8')) as { tokens: { text: string; is_final: boolean; end_ms?: number }[]; finished?: boolean; error_type?: string };
      if (f.error_type) error = f.error_type;
      if (firstNonFinalMs === null && speechStartSentAt !== undefined && f.tokens.some((t) => !t.is_final)) firstNonFinalMs = now - speechStartSentAt;
      if (
        finalizeMs === null &&
        speechEndSentAt !== undefined &&
        f.tokens.some((t) => t.is_final && t.end_ms !== undefined && t.end_ms >= clip.speechEndMs - 300)
      )
        finalizeMs = now - speechEndSentAt;
      if (f.finished || f.error_type) resolve(now);
    });
    ws.on('close', () => resolve(performance.now()));
  });
  ws.send(JSON.stringify({ api_key: apiKey, model: 'parlance-rt-en-v1', audio_format: 'pcm_s16le', sample_rate: 16000, num_channels: 1 }));
  const t0 = performance.now();
  const chunkBytes = CHUNK_MS * BYTES_PER_MS;
  for (let off = 0, n = 0; off < clip.pcm.length; off += chunkBytes, n++) {
    // Absolute schedule: no drift from timer lateness.
    const due = t0 + n * CHUNK_MS;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    ws.send(clip.pcm.subarray(off, off + chunkBytes));
    const sentMs = (off + chunkBytes) / BYTES_PER_MS;
    if (speechStartSentAt === undefined && sentMs > clip.speechStartMs) speechStartSentAt = performance.now();
    if (speechEndSentAt === undefined && sentMs >= clip.speechEndMs) speechEndSentAt = performance.now();
  }
  endSentAt = performance.now();
  ws.send('');
  const finishedAt = await finished;
  ws.close();
  return { firstNonFinalMs, finalizeMs, finishMs: finishedAt - endSentAt, ...(error ? { error } : {}) };
}

export async function run({ quick, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const dir = tempDir('parlance-bench-rt-');
  cleanup.add('remove temp dir', () => execFileP('rm', ['-rf', dir]));
  const clips = await Promise.all(Array.from({ length: quick ? 3 : SENTENCES.length }, (_, i) => makeClip(dir, i)));
  const s = await startParlance({ env: benchServerEnv({ PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '0', PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG: '0' }) });
  cleanup.add('stop server', () => s.stop());
  const wsUrl = `${s.url.replace('http', 'ws')}/transcribe-websocket`;
  const pid = findServerPid(s.dataDir);

  // Warm-up: the first session loads the model.
  await stream(wsUrl, s.apiKey, clips[0]!);

  log(`latency: ${clips.length} sessions one after another at real-time pace`);
  const sequential: StreamResult[] = [];
  for (const clip of clips) sequential.push(await stream(wsUrl, s.apiKey, clip));
  raw.sequential = sequential;
  const firsts = sequential.map((r) => r.firstNonFinalMs).filter((v): v is number => v !== null);
  const finals = sequential.map((r) => r.finalizeMs).filter((v): v is number => v !== null);
  const fs = summarize(firsts);
  const fz = summarize(finals);
  raw.first_non_final_ms = fs;
  raw.finalization_ms = fz;
  rows.push({
    benchmark: `first non-final token after speech starts (${firsts.length}/${clips.length} sessions, ${CHUNK_MS} ms chunks at real-time pace)`,
    result: `p50 ${round(fs.p50, 0)} ms, p95 ${round(fs.p95, 0)} ms, max ${round(fs.max, 0)} ms`,
    target: '≤ 300 ms',
    met: firsts.length === clips.length && fs.p95 <= 300,
  });
  rows.push({
    benchmark: `finalization after speech ends (${finals.length}/${clips.length} sessions; includes the 600 ms endpoint pause)`,
    result: `p50 ${round(fz.p50, 0)} ms, p95 ${round(fz.p95, 0)} ms`,
    target: 'p95 ≤ 1 s',
    met: finals.length === clips.length && fz.p95 <= 1000,
  });

  const levels = quick ? [1, 2, 4] : [1, 2, 4, 8, 12, 16, 24, 32].filter((n) => n <= 12 * os.availableParallelism());
  const concurrency: Record<string, unknown>[] = [];
  let sustained = 0;
  const idleRss = processMemory(pid).rss;
  let rssPerStream = NaN;
  for (const n of levels) {
    log(`concurrency: ${n} simultaneous sessions`);
    let peakRss = 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, processMemory(pid).rss)), 100);
    const cpuBefore = processCpuSeconds(pid);
    const levelClips = Array.from({ length: n }, (_, i) => clips[i % clips.length]!);
    const results = await Promise.all(levelClips.map((clip) => stream(wsUrl, s.apiKey, clip)));
    clearInterval(sampler);
    // Server CPU (all threads) per second of audio streamed: what one stream costs, decoding included.
    const audioSeconds = levelClips.reduce((sum, c) => sum + c.pcm.length / BYTES_PER_MS / 1000, 0);
    const cpuPerAudioSecond = (processCpuSeconds(pid) - cpuBefore) / audioSeconds;
    const firstP95 = summarize(results.map((r) => r.firstNonFinalMs ?? Infinity)).p95;
    const finishMax = Math.max(...results.map((r) => r.finishMs));
    const errors = results.filter((r) => r.error).length;
    const ok = errors === 0 && firstP95 <= 1000 && finishMax <= 1500;
    concurrency.push({ streams: n, ok, errors, first_non_final_p95_ms: round(firstP95, 0), finish_max_ms: round(finishMax, 0), peak_rss_mib: mib(peakRss), cpu_s_per_audio_s: round(cpuPerAudioSecond, 3) });
    if (!ok) break;
    sustained = n;
    rssPerStream = (peakRss - idleRss) / n;
  }
  raw.concurrency = concurrency;
  raw.idle_rss_mib = mib(idleRss);
  rows.push({
    benchmark: `concurrent real-time streams keeping up (first token p95 ≤ 1 s, finished ≤ 1.5 s after the end frame; ${os.availableParallelism()} cores)`,
    result: `${sustained} streams${sustained === levels[levels.length - 1] ? ' (highest level tried)' : ''}`,
    target: '— (report)',
    met: null,
  });
  rows.push({
    benchmark: `server memory per stream (RSS peak above idle ${mib(idleRss)} MiB, at ${sustained} streams)`,
    result: `${mib(rssPerStream)} MiB`,
    target: '— (report)',
    met: null,
  });
  await s.stop();
  log('accuracy: final tokens of live sessions against file transcription of the same real recordings');
  const wer = await liveWer();
  raw.live_wer = wer;
  const pct = (k: string) => `${round(wer[k]!.wer * 100, 1)} % (${wer[k]!.errors}/${wer[k]!.words})`;
  rows.push({ benchmark: 'WER, async transcription of the 10 pocketsphinx-testdata recordings', result: pct('async'), target: '— (reference)', met: null });
  for (const mode of ['one-pass', 'two-pass']) {
    for (const layout of ['clip per session', 'all clips in one session']) {
      const key = `live ${mode}, ${layout}`;
      const twoPass = mode === 'two-pass';
      rows.push({
        benchmark: `WER, live final tokens, ${mode}, ${layout}`,
        result: pct(key),
        target: twoPass ? '≤ async + 2 points' : '— (before)',
        met: twoPass ? wer[key]!.wer <= wer.async!.wer + 0.02 : null,
      });
    }
  }
  return { rows, raw };
}
