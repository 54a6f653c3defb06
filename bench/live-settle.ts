// Engine-only, in process (not the product's figure: no server, socket or pacing; `npm run bench -- live` measures the
// product): the live suite's conversation (live-conversation.ts) decoded by the streaming model's session code
// (online-sessions.ts) in 20 ms pieces with a finalize after each clip, for each settling distance of
// `--settle=2000,600` (words this far behind the audio turn final before their utterance ends), against the model
// decoding each clip whole (live-earliest.ts). Needs the real neural model beside the project.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { runCli, tempDir } from '../test/harness.js';
import { hasRealModel, REAL_STREAMING_MODEL } from '../test/real-model.js';
import { halfClips, werOf } from '../test/real-speech.js';
import { readManifest } from '../src/engines/model-dir/manifest.js';
import { onlineRecognizerConfig } from '../src/engines/stt/sherpa/online-config.js';
import { onlineHandler } from '../src/engines/stt/sherpa/online-sessions.js';
import type { OnlineReply } from '../src/engines/stt/sherpa/online-worker-messages.js';
import { buildConversation, type Conversation } from './live-conversation.js';
import { clipsAlone } from './live-earliest.js';
import { ATTRIBUTION_MS } from './live-score.js';
import { CHUNK_MS } from './realtime-stream.js';
import { round, type SuiteOptions, type SuiteResult } from './lib.js';

/** The server's pause for sessions that ask for none (sherpa engine.ts). */
const ENDPOINT_MS = 600;

async function decodeLive(modelDir: string, conversation: Conversation, settleMs: number): Promise<string[]> {
  const handle = onlineHandler();
  await handle({ op: 'load', config: onlineRecognizerConfig(readManifest(modelDir)) });
  await handle({ op: 'open', session: 1, endpointMs: ENDPOINT_MS, settleMs });
  const finals: { text: string; start_ms: number }[] = [];
  const take = (r: OnlineReply) => {
    if ('events' in r) for (const e of r.events) if (e.type === 'final') finals.push(...e.tokens);
  };
  const pcm = conversation.pcm;
  const samples = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
  const piece = CHUNK_MS * 16;
  let turn = 0;
  for (let at = 0; at < samples.length; at += piece) {
    take(await handle({ op: 'audio', session: 1, samples: samples.slice(at, at + piece) }));
    while (turn < conversation.turns.length && conversation.turns[turn]!.endMs <= (at + piece) / 16) {
      take(await handle({ op: 'finalize', session: 1, end: false }));
      turn++;
    }
  }
  take(await handle({ op: 'finalize', session: 1, end: true }));
  return conversation.turns.map((t) =>
    finals
      .filter((w) => w.start_ms >= t.startMs - ATTRIBUTION_MS && w.start_ms < t.endMs + ATTRIBUTION_MS)
      .map((w) => w.text)
      .join(' '),
  );
}

export async function run({ quick, args, cleanup, log }: SuiteOptions): Promise<SuiteResult> {
  if (!hasRealModel) throw new Error(`${REAL_STREAMING_MODEL} not found: this suite needs the real neural model`);
  const half = args.set === 'tune' ? 'tune' : 'held-out';
  const settles = (args.settle ?? '2000,600').split(',').map(Number);
  const dir = tempDir('parlance-bench-settle-');
  cleanup.add('remove temp dir', () => rmSync(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir);
  const id = 'gigaspeech-kws-3m-v1';
  const r = await runCli(['models', 'import', REAL_STREAMING_MODEL, '--family', 'stt-streaming', '--type', 'transducer', '--id', id, '--data-dir', dataDir]);
  if (r.code !== 0) throw new Error(`models import failed: ${r.stderr}`);
  const modelDir = path.join(dataDir, 'models', id);
  const conversation = await buildConversation(halfClips(quick ? 60 : 400, half), dir);
  const refs = conversation.turns.map((t) => t.clip.reference);
  const score = (texts: string[]) => werOf(refs.map((reference, i) => ({ reference, text: texts[i]! })));
  const pct = (w: ReturnType<typeof werOf>) => `${round(w.wer * 100, 1)} % (${w.errors}/${w.words})`;
  log(`${half}: ${conversation.turns.length} clips, whole-clip decode`);
  const whole = score(clipsAlone(modelDir, conversation).map((a) => a.text));
  const rows = [{ benchmark: `${half}: whole-clip decode WER (engine-only)`, result: pct(whole), target: '— (reference)', met: null }];
  const raw: Record<string, unknown> = { half, whole, live: {} };
  for (const settleMs of settles) {
    log(`${half}: live, settling ${settleMs} ms behind`);
    const live = score(await decodeLive(modelDir, conversation, settleMs));
    (raw.live as Record<string, unknown>)[settleMs] = live;
    rows.push({
      benchmark: `${half}: live final-token WER, words settled ${settleMs} ms behind (engine-only)`,
      result: pct(live),
      target: '— (report)',
      met: null,
    });
  }
  return { rows, raw };
}
