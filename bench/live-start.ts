// Speech from a session's first sample (issue 33, item 3): is a clip recognised as well when its speech starts at the
// first sample the server gets as when a second of a microphone's noise floor comes before it? One `parlance serve`
// with default settings (stream caps lifted, models preloaded, as in the live suite); each real recording of the
// chosen half is cut to its speech onset (the first 10 ms with a peak above -30 dBFS) and streamed in two sessions of
// its own over /transcribe-websocket at real-time pace, a finalize after its last sample: "first sample" (the clip,
// then 1 s of noise floor) and "after silence" (1 s of noise floor, the clip, 1 s). The two run one after the other,
// their order alternating from clip to clip so that drift in the machine's load does not favour one. Reported per
// model: final-token WER of each condition, the clips whose first reference word is the first final word, and the
// first word's errors (a word in the first two reference words missing or wrong).
// `--set=tune` chooses settings on the tuning half; the held-out half (default) is the one reported.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { normalizeWords, type WerResult, wordErrorRate } from '../src/engines/stt/wer.js';
import { startParlance, tempDir } from '../test/harness.js';
import { halfClips, speechBounds, werOf } from '../test/real-speech.js';
import type { Conversation } from './live-conversation.js';
import { scoreStream, type TurnScore } from './live-score.js';
import { streamConversation } from './live-stream.js';
import { BYTES_PER_MS, CHUNK_MS } from './realtime-stream.js';
import { benchServerEnv, noiseFloor, pcm16k, type Row, type SuiteOptions, type SuiteResult } from './lib.js';

const LEAD_MS = 1000;
const MODEL = 'parlance-rt-en-v1';

type Condition = 'first_sample' | 'after_silence';

/** One clip alone in a session: `leadMs` of noise floor (0 for none), the clip from its onset, a second of noise. */
function session(clip: Conversation['turns'][number]['clip'], speech: Buffer, leadMs: number, seed: number): Conversation {
  const lead = leadMs ? noiseFloor(leadMs, seed) : Buffer.alloc(0);
  const pieceBytes = CHUNK_MS * BYTES_PER_MS;
  const pad = (pieceBytes - (speech.length % pieceBytes)) % pieceBytes;
  const tail = noiseFloor((pad + LEAD_MS * BYTES_PER_MS) / BYTES_PER_MS, seed + 1);
  const startMs = lead.length / BYTES_PER_MS;
  const endMs = startMs + speech.length / BYTES_PER_MS;
  const words = normalizeWords(clip.reference).length;
  return {
    pcm: Buffer.concat([lead, speech, tail]),
    turns: [{ clip, words, wav: '', startMs, endMs, speechStartMs: startMs, speechEndMs: endMs }],
  };
}

/** The clip's first final word is its first reference word. */
const firstWordRight = (t: TurnScore) => normalizeWords(t.hypothesis)[0] === normalizeWords(t.reference)[0];

const errorsOf = (r: WerResult) => r.substitutions + r.deletions + r.insertions;

/** Errors on the first two reference words: the alignment's errors over a prefix of both texts. */
function onsetErrors(t: TurnScore): number {
  const ref = normalizeWords(t.reference).slice(0, 2);
  const hyp = normalizeWords(t.hypothesis);
  // The hypothesis prefix that aligns best with the reference's first words (a missing word makes it shorter).
  let best = ref.length;
  for (let k = 0; k <= Math.min(hyp.length, ref.length + 1); k++) best = Math.min(best, errorsOf(wordErrorRate(ref, hyp.slice(0, k))));
  return best;
}

export async function run({ quick, args: options, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const half = options.set === undefined ? 'held-out' : options.set;
  if (half !== 'held-out' && half !== 'tune') throw new Error(`--set=${options.set}: tune or held-out`);
  const clips = halfClips(quick ? 40 : 300, half);
  const dir = tempDir('parlance-bench-live-start-');
  cleanup.add('remove temp dir', () => rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  log(`decoding ${clips.length} ${half} clips`);
  const speech = await Promise.all(
    clips.map(async (clip) => {
      const pcm = await pcm16k(clip.file);
      return pcm.subarray(speechBounds(pcm).start * BYTES_PER_MS);
    }),
  );

  const env = benchServerEnv({
    PARLANCE_REALTIME_CONCURRENT_STREAMS_PROJECT: '0',
    PARLANCE_REALTIME_CONCURRENT_STREAMS_ORG: '0',
    PARLANCE_STT_PRELOAD: 'true',
  });
  const s = await startParlance({ dataDir, env });
  cleanup.add('stop server', () => s.stop());
  const wsUrl = `${s.url.replace('http', 'ws')}/transcribe-websocket`;
  const play = async (c: Conversation) => scoreStream(c, await streamConversation(wsUrl, s.apiKey, MODEL, c)).turns[0]!;

  log('warm-up session');
  await play(session(clips[0]!, speech[0]!, LEAD_MS, 99));
  const turns: Record<Condition, TurnScore[]> = { first_sample: [], after_silence: [] };
  for (let i = 0; i < clips.length; i++) {
    log(`clip ${i + 1}/${clips.length}: ${path.basename(clips[i]!.file)}`);
    const order: Condition[] = i % 2 ? ['after_silence', 'first_sample'] : ['first_sample', 'after_silence'];
    for (const condition of order) turns[condition].push(await play(session(clips[i]!, speech[i]!, condition === 'first_sample' ? 0 : LEAD_MS, 2 * i + 1)));
  }
  await s.stop();

  const summary = (c: Condition) => ({
    final_wer: werOf(turns[c].map((t) => ({ reference: t.reference, text: t.hypothesis }))),
    first_word_right: turns[c].filter(firstWordRight).length,
    onset_errors: turns[c].reduce((n, t) => n + onsetErrors(t), 0),
  });
  const result = { first_sample: summary('first_sample'), after_silence: summary('after_silence') };
  const pct = (w: { wer: number; errors: number; words: number }) => `${(w.wer * 100).toFixed(1)} % (${w.errors}/${w.words})`;
  const rows: Row[] = [
    {
      benchmark: `final WER, ${clips.length} ${half} clips from their first sample vs after 1 s of noise floor`,
      result: `${pct(result.first_sample.final_wer)} vs ${pct(result.after_silence.final_wer)}`,
      target: 'first sample ≤ after silence',
      met: result.first_sample.final_wer.errors <= result.after_silence.final_wer.errors,
    },
    {
      benchmark: 'clips whose first final word is the first reference word',
      result: `${result.first_sample.first_word_right} vs ${result.after_silence.first_word_right} of ${clips.length}`,
      target: 'first sample ≥ after silence',
      met: result.first_sample.first_word_right >= result.after_silence.first_word_right,
    },
    {
      benchmark: 'errors on the first two reference words of each clip',
      result: `${result.first_sample.onset_errors} vs ${result.after_silence.onset_errors}`,
      target: 'first sample ≤ after silence',
      met: result.first_sample.onset_errors <= result.after_silence.onset_errors,
    },
  ];
  return {
    rows,
    raw: {
      half,
      model: MODEL,
      lead_ms: LEAD_MS,
      server_env: env,
      result,
      clips: clips.map((c, i) => ({ file: c.file, first_sample: turns.first_sample[i], after_silence: turns.after_silence[i] })),
    },
  };
}
