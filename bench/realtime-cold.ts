// Cold start of the realtime suite: what the first user after a server start sees. Each round starts a fresh
// `parlance serve` (info logs, so the 'speech model loaded' line shows), opens one session and measures its first
// non-final token after speech starts (stream() in realtime-stream.ts), then a second session on the same server
// (warm) with the same clip. Variants:
//   - preload on (PARLANCE_STT_PRELOAD=1), session opened as soon as the server prints its listening line: a session
//     that arrives while the model is still loading waits for it;
//   - preload on, session opened only after the 'speech model loaded' log line (an operator who waits for readiness;
//     the warm streaming decoders may still be loading then);
//   - preload off (PARLANCE_STT_PRELOAD=0, the before): the first session loads the model itself.
import { performance } from 'node:perf_hooks';
import { startParlance } from '../test/harness.js';
import { benchServerEnv, type Cleanup, percentile, round, type Row } from './lib.js';
import { type Clip, stream } from './realtime-stream.js';

const LOADED = '"speech model loaded"';

interface Variant {
  key: string;
  preload: boolean;
  waitLoaded: boolean;
  label: string;
}

const VARIANTS: Variant[] = [
  { key: 'preload_on_at_listening', preload: true, waitLoaded: false, label: 'preload on, session opened at the listening line' },
  { key: 'preload_on_after_loaded', preload: true, waitLoaded: true, label: "preload on, session opened after the 'speech model loaded' line" },
  { key: 'preload_off_at_listening', preload: false, waitLoaded: false, label: 'preload off (before), session opened at the listening line' },
];

interface ColdRound {
  clip: number;
  /** Spawn to the listening line. */
  listening_ms: number;
  /** Listening line to the first sight of the 'speech model loaded' line (polled every 10 ms); null: not seen. */
  loaded_seen_after_listening_ms: number | null;
  /** The load time the server logged. */
  model_load_logged_ms: number | null;
  session_opened_after_listening_ms: number;
  cold_first_non_final_ms: number | null;
  warm_first_non_final_ms: number | null;
  errors: string[];
}

async function coldRound(variant: Variant, clip: Clip, clipIndex: number, cleanup: Cleanup): Promise<ColdRound> {
  const spawnAt = performance.now();
  const s = await startParlance({
    env: benchServerEnv({
      PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '0',
      PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG: '0',
      PARLANCE_STT_PRELOAD: variant.preload ? '1' : '0',
      PARLANCE_LOG_LEVEL: 'info',
    }),
  });
  const listeningAt = performance.now();
  cleanup.add('stop cold-start server', () => s.stop());
  let loadedSeenAt: number | undefined;
  const poller = setInterval(() => {
    if (loadedSeenAt === undefined && s.stderr().includes(LOADED)) loadedSeenAt = performance.now();
  }, 10);
  try {
    if (variant.waitLoaded) {
      const deadline = listeningAt + 120_000;
      while (loadedSeenAt === undefined) {
        if (performance.now() > deadline) throw new Error(`no 'speech model loaded' line within 120 s:\n${s.stderr()}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const openedAt = performance.now();
    const wsUrl = `${s.url.replace('http', 'ws')}/transcribe-websocket`;
    const cold = await stream(wsUrl, s.apiKey, clip);
    const warm = await stream(wsUrl, s.apiKey, clip);
    const line = s
      .stderr()
      .split('\n')
      .find((l) => l.includes(LOADED));
    return {
      clip: clipIndex,
      listening_ms: round(listeningAt - spawnAt, 0),
      loaded_seen_after_listening_ms: loadedSeenAt === undefined ? null : round(loadedSeenAt - listeningAt, 0),
      model_load_logged_ms: line ? (JSON.parse(line) as { ms: number }).ms : null,
      session_opened_after_listening_ms: round(openedAt - listeningAt, 0),
      cold_first_non_final_ms: cold.firstNonFinalMs === null ? null : round(cold.firstNonFinalMs, 1),
      warm_first_non_final_ms: warm.firstNonFinalMs === null ? null : round(warm.firstNonFinalMs, 1),
      errors: [cold.error, warm.error].filter((e): e is string => e !== undefined),
    };
  } finally {
    clearInterval(poller);
    await s.stop();
  }
}

export async function coldStart(
  clips: Clip[],
  rounds: number,
  cleanup: Cleanup,
  log: (m: string) => void,
): Promise<{ rows: Row[]; raw: Record<string, ColdRound[]> }> {
  const raw: Record<string, ColdRound[]> = {};
  const rows: Row[] = [];
  for (const variant of VARIANTS) {
    const results: ColdRound[] = [];
    for (let r = 0; r < rounds; r++) {
      log(`cold start: ${variant.label}, restart ${r + 1}/${rounds}`);
      results.push(await coldRound(variant, clips[r % clips.length]!, r % clips.length, cleanup));
    }
    raw[variant.key] = results;
    const complete = results.filter((x) => x.cold_first_non_final_ms !== null && x.warm_first_non_final_ms !== null && !x.errors.length);
    const diffs = complete.map((x) => x.cold_first_non_final_ms! - x.warm_first_non_final_ms!);
    const med = (xs: number[]) => round(percentile(xs, 50), 0);
    const loaded = results.map((x) => x.loaded_seen_after_listening_ms).filter((v): v is number => v !== null);
    const sign = (n: number) => (n >= 0 ? `+${n}` : `${n}`);
    const missing = results.length - complete.length;
    const result = complete.length
      ? `first session ${med(complete.map((x) => x.cold_first_non_final_ms!))} ms vs warm ${med(complete.map((x) => x.warm_first_non_final_ms!))} ms: ` +
        `${sign(med(diffs))} ms (each: ${diffs.map((d) => sign(round(d, 0))).join(', ')})` +
        (loaded.length ? `; model loaded ${med(loaded)} ms after listening` : '')
      : 'no complete round';
    rows.push({
      benchmark: `cold start, ${variant.label}: first session's first non-final token vs a warm session's (median of ${rounds} restarts)`,
      result: result + (missing ? `; ${missing}/${results.length} rounds without a first token or with errors` : ''),
      target: variant.preload ? 'within 100 ms' : '— (before)',
      met: variant.preload ? complete.length === results.length && med(diffs) <= 100 : null,
    });
  }
  return { rows, raw };
}
