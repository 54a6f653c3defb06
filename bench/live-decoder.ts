// Engine-only, in process (not the product's figure: no server, socket or pacing; `npm run bench -- live` measures the
// product): the live suite's conversation (live-conversation.ts) through one pocketsphinx live session in 20 ms
// pieces, as fast as the engine takes them, with a finalize after each clip and every second pass waited for. Per
// decoding profile: final-token word errors and the process's CPU (every thread). Chooses the streaming decoder's
// settings, how much of a session the built-in second pass covers and how far behind the audio words settle
// (options.ts); on the tuning half by default. `--only=TEXT` runs the profiles whose name contains TEXT.
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { tempDir } from '../test/harness.js';
import { halfClips, werOf } from '../test/real-speech.js';
import type { Token } from '../src/engines/stt/interface.js';
import { PocketsphinxEngine } from '../src/engines/stt/pocketsphinx/engine.js';
import { CUT_AT_PAUSE, type PocketsphinxOptions } from '../src/engines/stt/pocketsphinx/options.js';
import { buildConversation, type Conversation } from './live-conversation.js';
import { CHUNK_MS } from './realtime-stream.js';
import { round, type SuiteOptions, type SuiteResult } from './lib.js';

const EARLIER_STREAM_ARGS = { '-maxhmmpf': '1500', '-maxwpf': '5', '-pl_window': '5' };
const WAIT = { waitMs: 600_000, budgetMs: Number.POSITIVE_INFINITY };

/** Utterances end at endpoints and finalize only: how the profiles measured before the cut at pauses ran. */
const NO_CUT = { cutAtPause: false } as const;

/** name → options over the engine's defaults. */
const PROFILES: Record<string, PocketsphinxOptions> = {
  'default (streaming 4000/10, second pass over the first 10 s, utterances cut at every 100 ms pause)': { secondPass: WAIT },
  'no cut at pauses (utterances end at endpoints and finalize)': { secondPass: WAIT, ...NO_CUT },
  'cut at every 100 ms pause, in second-pass utterances too (2026-11-29 e2bf418)': { secondPass: WAIT, cutAtPause: { ...CUT_AT_PAUSE, inSecondPass: true } },
  'cut at every 200 ms pause': { secondPass: WAIT, cutAtPause: { afterFraction: 0, pauseMs: 200 } },
  'cut at every 300 ms pause': { secondPass: WAIT, cutAtPause: { afterFraction: 0, pauseMs: 300 } },
  'cut at 100 ms pauses after 2 s (the earlier profile)': { secondPass: WAIT, cutAtPause: { afterFraction: 0.5, pauseMs: 100 } },
  'no cut, words settling 300 ms behind': { secondPass: WAIT, ...NO_CUT, settleMs: 300 },
  'no cut, words settling 400 ms behind': { secondPass: WAIT, ...NO_CUT, settleMs: 400 },
  'no cut, words settling 600 ms behind': { secondPass: WAIT, ...NO_CUT, settleMs: 600 },
  'no cut, words settling 1000 ms behind': { secondPass: WAIT, ...NO_CUT, settleMs: 1000 },
  'no cut, words settling 1500 ms behind': { secondPass: WAIT, ...NO_CUT, settleMs: 1500 },
  'no cut, words settling 2500 ms behind': { secondPass: WAIT, ...NO_CUT, settleMs: 2500 },
  'no cut, no second pass': { secondPass: { ...WAIT, coveredMs: 0 }, ...NO_CUT },
  'no cut, second pass over the first 5 s': { secondPass: { ...WAIT, coveredMs: 5000 }, ...NO_CUT },
  'no cut, second pass over the first 20 s': { secondPass: { ...WAIT, coveredMs: 20_000 }, ...NO_CUT },
  'no cut, second pass over the first 40 s': { secondPass: { ...WAIT, coveredMs: 40_000 }, ...NO_CUT },
  'no cut, second pass over every utterance': { secondPass: { ...WAIT, coveredMs: Number.POSITIVE_INFINITY }, ...NO_CUT },
  'no cut, earlier streaming profile (1500/5/pl_window 5), no second pass': {
    streamDecoderArgs: EARLIER_STREAM_ARGS,
    secondPass: { ...WAIT, coveredMs: 0 },
    ...NO_CUT,
  },
  'no cut, earlier streaming profile, second pass over every utterance (the earlier default)': {
    streamDecoderArgs: EARLIER_STREAM_ARGS,
    secondPass: { ...WAIT, coveredMs: Number.POSITIVE_INFINITY },
    ...NO_CUT,
  },
  'no cut, no second pass, no narrowband adaptation': { secondPass: { ...WAIT, coveredMs: 0 }, narrowbandTransform: false, ...NO_CUT },
};

async function decode(options: PocketsphinxOptions, conversation: Conversation): Promise<{ texts: string[]; early: number; cpuS: number; wallS: number }> {
  const engine = new PocketsphinxEngine({ poolSize: 2, warmStreams: 1, ...options });
  try {
    // The server's default bound on non-final tokens (what cutAtPause is a fraction of).
    const session = await (await engine.load('en-us')).stream({ language: 'en', maxNonFinalMs: 4000 });
    const finals: Token[] = [];
    session.on('final', (t) => finals.push(...t));
    const texts: string[] = [];
    const piece = CHUNK_MS * 32;
    const cpu = process.cpuUsage();
    const started = performance.now();
    let at = 0;
    // Final words out before their clip's finalize: settled while the clip was still being spoken.
    let early = 0;
    for (const turn of conversation.turns) {
      const end = turn.endMs * 32;
      for (; at < end; at += piece) await session.write(conversation.pcm.subarray(at, Math.min(at + piece, end)));
      at = end;
      early += finals.length;
      await session.finalize();
      texts.push(
        finals
          .splice(0)
          .map((t) => t.text)
          .join(' '),
      );
    }
    await session.end();
    const used = process.cpuUsage(cpu);
    return { texts, early, cpuS: (used.user + used.system) / 1e6, wallS: (performance.now() - started) / 1000 };
  } finally {
    await engine.close();
  }
}

export async function run({ quick, args, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  const half = args.set === 'held-out' ? 'held-out' : 'tune';
  const dir = tempDir('parlance-bench-live-decoder-');
  cleanup.add('remove temp dir', () => rmSync(dir, { recursive: true, force: true }));
  const conversation = await buildConversation(halfClips(quick ? 60 : 400, half), dir);
  const audioS = conversation.pcm.length / 32_000;
  const refs = conversation.turns.map((t) => t.clip.reference);
  const rows: SuiteResult['rows'] = [];
  const raw: Record<string, unknown> = { half, audio_s: round(audioS, 1), profiles: {} };
  const only = args.only ?? '';
  for (const [name, options] of Object.entries(PROFILES).filter(([n]) => n.includes(only))) {
    log(`${half}: ${name}`);
    const r = await decode(options, conversation);
    const wer = werOf(refs.map((reference, i) => ({ reference, text: r.texts[i]! })));
    (raw.profiles as Record<string, unknown>)[name] = { wer, early_finals: r.early, cpu_s: round(r.cpuS, 1), wall_s: round(r.wallS, 1), texts: r.texts };
    rows.push({
      benchmark: `${half}: ${name}: final-token word errors; final words before their clip's finalize; CPU for ${round(audioS, 0)} s of audio (engine-only)`,
      result: `${wer.errors}/${wer.words} (${round(wer.wer * 100, 1)} %); ${r.early}; ${round(r.cpuS, 1)} s`,
      target: '— (report)',
      met: null,
    });
  }
  return { rows, raw };
}
