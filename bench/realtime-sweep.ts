// Concurrency sweep of the realtime suite on one server: n sessions started at once (so all speak at the same
// moment), at real-time pace, for rising n until a level does not keep up: first non-final token p95 ≤ 1 s and every
// stream's finished frame ≤ 1.5 s after its end frame, no errors. Per level also the finalization p95, peak RSS,
// the server's CPU (every thread) per second of audio, and, when the server logs at info, how the utterances' second
// passes fared (from the 'real-time session finished' lines).
import { mib, processCpuSeconds, processMemory, round, summarize } from './lib.js';
import { BYTES_PER_MS, type Clip, stream } from './realtime-stream.js';

export interface SweepServer {
  wsUrl: string;
  apiKey: string;
  pid: number;
  /** The server's stderr so far. */
  stderr(): string;
}

export interface SweepResult {
  levels: Record<string, unknown>[];
  /** Highest level that kept up (0: none). */
  sustained: number;
  idleRss: number;
  rssPerStream: number;
  /** Finalization p95 at the sustained level (ms). */
  finalizeP95AtSustained: number;
}

/** Sum of the `second_pass` counts of the session-finished log lines in `text`. */
function secondPassCounts(text: string): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (!line.includes('"real-time session finished"')) continue;
    try {
      const sp = (JSON.parse(line) as { second_pass?: Record<string, number> }).second_pass ?? {};
      for (const [k, v] of Object.entries(sp)) sum[k] = (sum[k] ?? 0) + v;
    } catch {
      // not a JSON log line
    }
  }
  return sum;
}

export async function sweep(s: SweepServer, clips: Clip[], levels: number[], log: (m: string) => void): Promise<SweepResult> {
  const out: Record<string, unknown>[] = [];
  let sustained = 0;
  const idleRss = processMemory(s.pid).rss;
  let rssPerStream = NaN;
  let finalizeP95AtSustained = NaN;
  for (const n of levels) {
    log(`concurrency: ${n} simultaneous sessions`);
    let peakRss = 0;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, processMemory(s.pid).rss)), 100);
    const cpuBefore = processCpuSeconds(s.pid);
    const logFrom = s.stderr().length;
    const levelClips = Array.from({ length: n }, (_, i) => clips[i % clips.length]!);
    const results = await Promise.all(levelClips.map((clip) => stream(s.wsUrl, s.apiKey, clip)));
    clearInterval(sampler);
    // Server CPU (all threads) per second of audio streamed: what one stream costs, decoding included.
    const audioSeconds = levelClips.reduce((sum, c) => sum + c.pcm.length / BYTES_PER_MS / 1000, 0);
    const cpuPerAudioSecond = (processCpuSeconds(s.pid) - cpuBefore) / audioSeconds;
    // The session-finished line is logged just after the finished frame: let it reach the pipe.
    await new Promise((r) => setTimeout(r, 300));
    const firstP95 = summarize(results.map((r) => r.firstNonFinalMs ?? Infinity)).p95;
    const finalizeP95 = summarize(results.map((r) => r.finalizeMs ?? Infinity)).p95;
    const finishMax = Math.max(...results.map((r) => r.finishMs));
    const errors = results.filter((r) => r.error).length;
    const ok = errors === 0 && firstP95 <= 1000 && finishMax <= 1500;
    out.push({
      streams: n,
      ok,
      errors,
      first_non_final_p95_ms: round(firstP95, 0),
      finalize_p95_ms: round(finalizeP95, 0),
      finish_max_ms: round(finishMax, 0),
      peak_rss_mib: mib(peakRss),
      cpu_s_per_audio_s: round(cpuPerAudioSecond, 3),
      second_pass: secondPassCounts(s.stderr().slice(logFrom)),
    });
    if (!ok) break;
    sustained = n;
    rssPerStream = (peakRss - idleRss) / n;
    finalizeP95AtSustained = finalizeP95;
  }
  return { levels: out, sustained, idleRss, rssPerStream, finalizeP95AtSustained };
}
