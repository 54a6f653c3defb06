// Live suite (issue 32): the product's live path, measured the way a voice agent uses it, for every installed model.
// One `parlance serve` on a temporary data dir with default settings for everything that affects recognition (only
// the per-project and per-organization stream caps are lifted), the built-in pocketsphinx model and, when the folder
// is beside the project, the neural streaming model imported with `parlance models import`. The audio is a
// conversation of held-out real recordings (live-conversation.ts) streamed over /transcribe-websocket at real-time
// pace with a finalize after each clip (live-stream.ts), by 1 stream and by 4 at once; scored in live-score.ts:
// final-token WER against the same model's async WER on the same clips, first token, non-final lag, finalize → final,
// final lag after the word's end, streams kept up.
// `--formats=pcm,wav,mp3,ogg-opus,webm-opus,flac` measures instead the conversation in each container, sent with
// `audio_format: "auto"` at real-time pace (live-formats.ts), one stream each after the warm-up: non-final lag
// p50 / p90 / p95, first token, and the final words against the pcm stream's; no async transcription.
// `--endpoints` streams the conversation once per model with endpoint detection on and no finalize
// (live-endpoints.ts): when `<end>` comes after each clip's speech, final WER and final lag.
import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Parlance, runCli, startParlance, tempDir, transcribeFile, waitFor } from '../test/harness.js';
import { hasRealModel, REAL_STREAMING_MODEL } from '../test/real-model.js';
import { halfClips, werOf } from '../test/real-speech.js';
import { buildConversation, type Conversation, GAP_MS, type Turn } from './live-conversation.js';
import { ATTRIBUTION_MS, finalWer, KEPT_UP_MS, scoreStream, type StreamScore } from './live-score.js';
import { type ClipAlone, clipsAlone } from './live-earliest.js';
import { endpointRows, scoreEndpoints } from './live-endpoints.js';
import { encodeConversation, type EncodedFormat, parseFormats } from './live-formats.js';
import { streamConversation } from './live-stream.js';
import { BYTES_PER_MS } from './realtime-stream.js';
import { benchServerEnv, findServerPid, percentile, processCpuSeconds, round, type Row, summarize, type SuiteOptions, type SuiteResult } from './lib.js';

const NEURAL_DIR = REAL_STREAMING_MODEL;
const NEURAL_ID = 'gigaspeech-kws-3m-v1';
/** Streams at once (`--streams=1,4,16` changes them). */
const DEFAULT_LEVELS = [1, 4];
/** Start offset between the concurrent streams, so they do not send in lockstep. */
const STAGGER_MS = 250;
/** Targets from the issue. */
const WER_MARGIN = 0.005;
/** Live and async WER within this of the whole-clip decode's. */
const WHOLE_MARGIN = 0.01;
const FINALIZE_P95_MS = 400;
const NON_FINAL_P95_MS = 300;
const FIRST_TOKEN_OVER_MS = 150;
/** Issue 33's target for every container sent with `auto`. */
const FORMAT_NON_FINAL_P90_MS = 500;

interface Model {
  label: string;
  live: string;
  /** The async model id tried on the same clips. */
  async: string;
  /** Engine-only: per clip, the model alone: its earliest text and its whole-clip words (live-earliest.ts). */
  alone?: ClipAlone[];
  /** The WER of those whole-clip decodes. */
  whole?: ReturnType<typeof werOf>;
}

type AsyncResult = { offered: true; wer: ReturnType<typeof werOf>; clips: { file: string; text: string }[] } | { offered: false; message: string };

/** Each clip's WAV uploaded and transcribed (two at a time) with `model`; not offered when the server refuses the id. */
async function asyncWer(s: Parlance, model: string, turns: Turn[]): Promise<AsyncResult> {
  const texts: string[] = new Array(turns.length);
  let refused: string | undefined;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < turns.length && !refused; i = next++) {
      try {
        texts[i] = (await transcribeFile(s, turns[i]!.wav, { model })).text;
      } catch (err) {
        const message = (err as Error).message;
        if (!message.includes('model_not_available')) throw err;
        refused = message;
      }
    }
  };
  await Promise.all([worker(), worker()]);
  if (refused) return { offered: false, message: refused };
  return {
    offered: true,
    wer: werOf(turns.map((t, i) => ({ reference: t.clip.reference, text: texts[i]! }))),
    clips: turns.map((t, i) => ({ file: t.clip.file, text: texts[i]! })),
  };
}

const pct = (w: { wer: number; errors: number; words: number }) => `${round(w.wer * 100, 1)} % (${w.errors}/${w.words})`;
const ms = (samples: number[]) => {
  if (!samples.length) return 'none';
  const s = summarize(samples);
  return `p50 ${round(s.p50, 0)} ms, p95 ${round(s.p95, 0)} ms`;
};

export async function run({ quick, args: options, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const levels = options.streams ? options.streams.split(',').map(Number) : DEFAULT_LEVELS;
  if (levels.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--streams=${options.streams}: give whole numbers, e.g. --streams=1,4,16`);
  const formats = options.formats === undefined ? undefined : parseFormats(options.formats);
  if (formats && options.streams) throw new Error('--formats runs one stream per format: leave out --streams');
  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const dir = tempDir('parlance-bench-live-');
  cleanup.add('remove temp dir', () => rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);

  // `--models=neural` (or pocketsphinx) measures that one only.
  const only = options.models;
  const models: Model[] = only === 'neural' ? [] : [{ label: 'pocketsphinx', live: 'parlance-rt-en-v1', async: 'parlance-async-en-v1' }];
  if (hasRealModel && only !== 'pocketsphinx') {
    log(`importing ${path.basename(NEURAL_DIR)} as ${NEURAL_ID}`);
    const args = ['models', 'import', NEURAL_DIR, '--family', 'stt-streaming', '--type', 'transducer', '--id', NEURAL_ID, '--data-dir', dataDir, '--json'];
    const r = await runCli(args);
    raw.neural_import = { command: `parlance ${args.join(' ')}`, code: r.code, stdout: r.stdout, stderr: r.stderr };
    if (r.code === 0) models.push({ label: `neural (${NEURAL_ID})`, live: NEURAL_ID, async: NEURAL_ID });
    else rows.push({ benchmark: `${NEURAL_ID}: models import`, result: `failed (${r.code}): ${r.stderr.trim().split('\n')[0]}`, target: '—', met: false });
  } else raw.neural_import = hasRealModel ? 'not asked for (--models=pocketsphinx)' : `${NEURAL_DIR} not found: neural model not measured`;

  // `--set=tune`: the tuning half, to choose settings on; reported figures come from the held-out default.
  const half = options.set === undefined ? 'held-out' : options.set;
  if (half !== 'held-out' && half !== 'tune') throw new Error(`--set=${options.set}: tune or held-out`);
  const clips = halfClips(quick ? 60 : 400, half);
  log(`decoding ${clips.length} ${half} clips`);
  const conversation = await buildConversation(clips, dir);
  for (const m of models.filter((x) => x.live === NEURAL_ID)) {
    m.alone = clipsAlone(path.join(dataDir, 'models', NEURAL_ID), conversation);
    raw.neural_earliest_first_text_ms = m.alone.map((a) => a.firstTextMs);
    m.whole = werOf(conversation.turns.map((t, i) => ({ reference: t.clip.reference, text: m.alone![i]!.text })));
    raw.neural_whole_clip = { wer: m.whole, clips: m.alone.map((a, i) => ({ file: conversation.turns[i]!.clip.file, text: a.text })) };
  }
  const { turns } = conversation;
  const words = turns.reduce((n, t) => n + t.words, 0);
  const conversationMs = conversation.pcm.length / BYTES_PER_MS;
  raw.config = {
    clips: turns.map((t) => ({ file: t.clip.file, set: t.clip.set, words: t.words, start_ms: t.startMs, end_ms: t.endMs, speech_start_ms: t.speechStartMs })),
    half,
    reference_words: words,
    conversation_ms: conversationMs,
    gap_ms: GAP_MS,
    attribution_ms: ATTRIBUTION_MS,
    kept_up_ms: KEPT_UP_MS,
    levels: formats ? [] : levels,
    stagger_ms: STAGGER_MS,
    ...(formats ? { formats } : {}),
  };
  const encoded = new Map<string, EncodedFormat>();
  for (const name of formats ?? []) {
    log(`encoding the conversation as ${name}`);
    encoded.set(name, await encodeConversation(name, conversation, dir));
  }

  // Only the stream caps are lifted; preload back to its default (the test harness turns it off). Info logs: the
  // session-finished lines say how the utterances' second passes fared.
  const env = benchServerEnv({
    PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '0',
    PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG: '0',
    PARLANCE_STT_PRELOAD: 'true',
    PARLANCE_LOG_LEVEL: 'info',
  });
  raw.server_env = env;
  const s = await startParlance({ dataDir, env });
  cleanup.add('stop server', () => s.stop());
  const pid = findServerPid(dataDir);
  const wsUrl = `${s.url.replace('http', 'ws')}/transcribe-websocket`;
  raw.models_offered = ((await (await s.request('/v1/models')).json()) as { models?: { id: string; transcription_mode: string }[] }).models?.map(
    (m) => `${m.id} (${m.transcription_mode})`,
  );

  // Wall time, server CPU and the machine's load of each part (the machine may be shared).
  const phases: Record<string, { seconds: number; server_cpu_s: number; load_average_after: number[] }> = {};
  raw.phases = phases;
  const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const cpu = processCpuSeconds(pid);
    const out = await fn();
    phases[name] = {
      seconds: round((performance.now() - started) / 1000, 1),
      server_cpu_s: round(processCpuSeconds(pid) - cpu, 1),
      load_average_after: os.loadavg().map((n) => round(n, 2)),
    };
    return out;
  };
  /** `fn` (running `sessions` sessions) and the server's session-finished log lines (second-pass counts) meanwhile. */
  const sessionLines = async <T>(sessions: number, fn: () => Promise<T>): Promise<{ out: T; lines: unknown[] }> => {
    const from = s.stderr().length;
    const out = await fn();
    const lines = () =>
      s
        .stderr()
        .slice(from)
        .split('\n')
        .filter((l) => l.includes('"real-time session finished"'));
    // Each line is written just after its session's finished frame and comes through a pipe; a session that never
    // finished writes none.
    await waitFor(
      async () => lines().length,
      (k) => k >= sessions,
      5000,
      20,
    ).catch(() => undefined);
    return { out, lines: lines().map((l) => JSON.parse(l) as unknown) };
  };

  // The first clip alone: the session that loads what the first session of a model loads.
  const warmUp: Conversation = { pcm: conversation.pcm.subarray(0, (turns[1]?.startMs ?? conversationMs) * BYTES_PER_MS), turns: turns.slice(0, 1) };
  const results: Record<string, unknown> = {};
  raw.models = results;
  for (const model of models) {
    if (formats) {
      log(`${model.label}: warm-up session`);
      const warm = await sessionLines(1, async () => scoreStream(warmUp, await streamConversation(wsUrl, s.apiKey, model.live, warmUp)));
      const perFormat: Record<string, unknown> = {};
      results[model.live] = { warm_up: { ...warm.out, session_log: warm.lines }, formats: perFormat };
      let pcm: StreamScore | undefined;
      for (const name of formats) {
        log(`${model.label}: ${name}, 1 stream, ${round(conversationMs / 1000, 0)} s`);
        const { payload, about } = encoded.get(name)!;
        const { out: score, lines } = await sessionLines(1, () =>
          timed(`${model.live}: ${name}`, async () => scoreStream(conversation, await streamConversation(wsUrl, s.apiKey, model.live, conversation, payload))),
        );
        if (name === 'pcm') pcm = score;
        const over = pcm && name !== 'pcm' ? lagOverPcm(score, pcm) : undefined;
        perFormat[name] = {
          ...about,
          ...summarizeLevel([score], lines),
          ...(over ? { non_final_lag_over_pcm_ms: withP90(over), paired_words: over.length } : {}),
        };
        rows.push(...formatRows(model, name, score, over));
      }
      continue;
    }
    log(`${model.label}: async transcription of ${turns.length} clips with ${model.async}`);
    const asyncResult = await timed(`${model.live}: async`, () => asyncWer(s, model.async, turns));
    rows.push({
      benchmark: `${model.label}: async WER (${model.async}, the same ${turns.length} clips uploaded)`,
      result: asyncResult.offered ? pct(asyncResult.wer) : 'n/a (not offered)',
      target: model.whole ? 'within 1 point of the whole-clip decode' : '— (reference)',
      met: model.whole && asyncResult.offered ? Math.abs(asyncResult.wer.wer - model.whole.wer) <= WHOLE_MARGIN : null,
    });
    if (model.whole) {
      rows.push({
        benchmark: `${model.label}: whole-clip decode WER (engine-only: each clip alone in process, the server's decoding settings)`,
        result: pct(model.whole),
        target: '— (reference)',
        met: null,
      });
    }
    log(`${model.label}: warm-up session`);
    const warm = await sessionLines(1, async () => scoreStream(warmUp, await streamConversation(wsUrl, s.apiKey, model.live, warmUp)));
    if (options.endpoints !== undefined) {
      log(`${model.label}: 1 stream with endpoint detection, ${round(conversationMs / 1000, 0)} s`);
      const { out, lines } = await sessionLines(1, () =>
        timed(`${model.live}: endpoints`, () => streamConversation(wsUrl, s.apiKey, model.live, conversation, undefined, { endpoints: true })),
      );
      const [score, ends] = [scoreStream(conversation, out), scoreEndpoints(conversation, out)];
      results[model.live] = { async: asyncResult, endpoints: { ...summarizeLevel([score], lines), ...ends } };
      rows.push(...endpointRows(model.label, score, ends, asyncResult.offered ? asyncResult.wer : undefined));
      continue;
    }
    const perLevel: Record<string, unknown> = {};
    results[model.live] = { async: asyncResult, warm_up: { ...warm.out, session_log: warm.lines }, levels: perLevel };
    for (const n of levels) {
      log(`${model.label}: ${n} stream(s), ${round(conversationMs / 1000, 0)} s each`);
      const { out: scores, lines } = await sessionLines(n, () =>
        timed(`${model.live}: ${n} streams`, () =>
          Promise.all(
            Array.from({ length: n }, async (_, i) => {
              await new Promise((r) => setTimeout(r, i * STAGGER_MS));
              return scoreStream(conversation, await streamConversation(wsUrl, s.apiKey, model.live, conversation));
            }),
          ),
        ),
      );
      perLevel[n] = summarizeLevel(scores, lines);
      rows.push(...levelRows(model, n, scores, asyncResult, levels));
    }
  }
  await s.stop();
  raw.load_average_at_end = os.loadavg().map((n) => round(n, 2));
  return { rows, raw };
}

const pool = (scores: StreamScore[], f: (s: StreamScore) => (number | null)[]) => scores.flatMap(f).filter((v): v is number => v !== null);

/** summarize() with the 90th percentile. */
const withP90 = (samples: number[]) => (samples.length ? { ...summarize(samples), p90: round(percentile(samples, 90), 3) } : null);

function summarizeLevel(scores: StreamScore[], sessionLog: unknown[]): Record<string, unknown> {
  const sum = withP90;
  return {
    final_wer: finalWer(scores),
    final_wer_per_stream: scores.map((s) => finalWer([s])),
    first_token_ms: sum(pool(scores, (s) => s.turns.map((t) => t.firstTokenMs))),
    first_token_over_own_end_ms: sum(pool(scores, (s) => s.turns.map((t) => t.firstTokenOverOwnEndMs))),
    non_final_lag_ms: sum(pool(scores, (s) => s.nonFinalLagMs)),
    non_final_retimed: scores.reduce((a, s) => a + s.nonFinalRetimed, 0),
    utterances_closed_before_finalize: scores.reduce((a, s) => a + s.turns.reduce((b, t) => b + t.closedBeforeFinalize, 0), 0),
    finalize_to_fin_ms: sum(pool(scores, (s) => s.turns.map((t) => t.finalizeMs))),
    final_lag_ms: sum(pool(scores, (s) => s.finalLagMs)),
    session_log: sessionLog,
    streams: scores.map(({ nonFinalWords: _words, ...rest }) => rest),
  };
}

const ms3 = (samples: number[]) => {
  const s = withP90(samples);
  return s ? `p50 ${round(s.p50, 0)} ms, p90 ${round(s.p90, 0)} ms, p95 ${round(s.p95, 0)} ms` : 'none';
};

/**
 * The format's own part of the lag: each non-final word paired with the pcm stream's word of the same text whose span
 * overlaps it (the nearest start), the difference of their lags. Words the decoder showed in one stream only (its
 * revisions differ from run to run) are left out.
 */
function lagOverPcm(score: StreamScore, pcm: StreamScore): number[] {
  const out: number[] = [];
  score.nonFinalWords.forEach((w, i) => {
    let best = -1;
    pcm.nonFinalWords.forEach((p, j) => {
      if (p.text !== w.text || p.startMs >= w.endMs || w.startMs >= p.endMs) return;
      if (best < 0 || Math.abs(p.startMs - w.startMs) < Math.abs(pcm.nonFinalWords[best]!.startMs - w.startMs)) best = j;
    });
    if (best >= 0) out.push(round(score.nonFinalLagMs[i]! - pcm.nonFinalLagMs[best]!, 1));
  });
  return out;
}

/** One format's stream: non-final lag (issue 33's target; with its difference to pcm's on the same words), first
 * token, final words. */
function formatRows(model: Model, name: string, score: StreamScore, overPcm?: number[]): Row[] {
  const tag = `${model.label}, ${name}${name === 'pcm' ? ' (pcm_s16le)' : ' (auto)'}, 1 stream`;
  const failed = score.error ? `; error: ${score.error}` : '';
  const lag = score.nonFinalLagMs;
  const firsts = score.turns.flatMap((t) => (t.firstTokenMs === null ? [] : [t.firstTokenMs]));
  return [
    {
      benchmark: `${tag}: non-final lag (${lag.length} words, re-timings apart${overPcm ? `; over pcm's on the same ${overPcm.length} words: ${ms3(overPcm)}` : ''})${failed}`,
      result: ms3(lag),
      target: `p90 ≤ ${FORMAT_NON_FINAL_P90_MS} ms`,
      met: !score.error && lag.length > 0 && percentile(lag, 90) <= FORMAT_NON_FINAL_P90_MS,
    },
    { benchmark: `${tag}: first token after speech starts (${firsts.length}/${score.turns.length} clips)`, result: ms3(firsts), target: '—', met: null },
    { benchmark: `${tag}: final-token WER`, result: pct(finalWer([score])), target: '— (against pcm)', met: null },
  ];
}

/** Live first token over the model's own earliest on the same clip (engine-only reference), per clip and stream. */
function overEarliestRow(tag: string, scores: StreamScore[], earliest: (number | null)[]): Row {
  const over = scores.flatMap((s) => s.turns.flatMap((t, i) => (t.firstTokenMs === null || earliest[i] == null ? [] : [t.firstTokenMs - earliest[i]!])));
  return {
    benchmark: `${tag}: first token over the model's earliest on the clip alone (engine-only, 20 ms pieces in process: ${ms(earliest.filter((v): v is number => v !== null))})`,
    result: ms(over),
    target: `p95 ≤ ${FIRST_TOKEN_OVER_MS} ms`,
    met: over.length > 0 && summarize(over).p95 <= FIRST_TOKEN_OVER_MS,
  };
}

function levelRows(model: Model, n: number, scores: StreamScore[], asyncResult: AsyncResult, levels: number[]): Row[] {
  const tag = `${model.label}, ${n} stream${n === 1 ? '' : 's'}`;
  const wer = finalWer(scores);
  const errors = scores.flatMap((s) => (s.error ? [s.error] : []));
  const firsts = pool(scores, (s) => s.turns.map((t) => t.firstTokenMs));
  const overEnd = pool(scores, (s) => s.turns.map((t) => t.firstTokenOverOwnEndMs));
  const nonFinal = pool(scores, (s) => s.nonFinalLagMs);
  const finalize = pool(scores, (s) => s.turns.map((t) => t.finalizeMs));
  const finalizes = scores.reduce((a, s) => a + s.finalizes, 0);
  const answered = scores.reduce((a, s) => a + s.finalizesAnswered, 0);
  const lateFinals = scores.reduce((a, s) => a + s.turns.reduce((b, t) => b + t.finalAfterFin, 0), 0);
  const clips = scores.reduce((a, s) => a + s.turns.length, 0);
  const kept = scores.filter((s) => s.keptUp).length;
  const p95 = (samples: number[]) => summarize(samples).p95;
  return [
    {
      benchmark: `${tag}: final-token WER${n > 1 ? ` (${n} streams pooled)` : ''}${errors.length ? `; errors: ${errors.join('; ')}` : ''}`,
      result: pct(wer),
      target: `≤ async + 0.5 points${model.whole ? ', within 1 point of the whole-clip decode' : ''}`,
      met: asyncResult.offered ? wer.wer <= asyncResult.wer.wer + WER_MARGIN && (!model.whole || Math.abs(wer.wer - model.whole.wer) <= WHOLE_MARGIN) : null,
    },
    {
      benchmark: `${tag}: first token after speech starts (${firsts.length}/${clips} clips; after its own end was sent: ${ms(overEnd)})`,
      result: ms(firsts),
      target: 'earliest + 150 ms',
      met: null,
    },
    ...(model.alone
      ? [
          overEarliestRow(
            tag,
            scores,
            model.alone.map((a) => a.firstTextMs),
          ),
        ]
      : []),
    {
      benchmark: `${tag}: non-final lag (each non-final word's first appearance after its end_ms was sent; ${nonFinal.length} words, re-timings apart)`,
      result: ms(nonFinal),
      target: `p95 ≤ ${NON_FINAL_P95_MS} ms`,
      met: nonFinal.length > 0 && p95(nonFinal) <= NON_FINAL_P95_MS,
    },
    {
      benchmark: `${tag}: finalize → <fin> (${answered}/${finalizes} answered; ${lateFinals} final tokens came after their clip's <fin>)`,
      result: ms(finalize),
      target: `p95 ≤ ${FINALIZE_P95_MS} ms`,
      met: finalize.length > 0 && answered === finalizes && p95(finalize) <= FINALIZE_P95_MS,
    },
    {
      benchmark: `${tag}: final-token lag after the word's end was sent`,
      result: ms(pool(scores, (s) => s.finalLagMs)),
      target: '— (report)',
      met: null,
    },
    {
      benchmark: `${tag}: streams kept up (finished ≤ ${KEPT_UP_MS / 1000} s after the end frame, all audio processed)`,
      result: `${kept} of ${n}`,
      target: `≥ 8 streams per core (${8 * os.availableParallelism()} here; only ${levels.join(', ')} run)`,
      // Fewer than n kept up shows the target missed; all n cannot show it met.
      met: kept < n ? false : null,
    },
  ];
}
