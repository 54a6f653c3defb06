// Live sessions of a streaming model decoded in batches (one decodeStreams call over the streams ready together),
// when the model's encoder takes a batch: the generated LSTM-shaped model does (its batch dimension is symbolic), the
// real GigaSpeech zipformer beside the project does not (exported with a batch of 1, which aborts onnxruntime), and
// the check in a child process tells them apart before the server loads either.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../../../../test/harness.js';
import { toneBursts, writeEnergyStreamingModel } from '../../../../test/fixtures/sherpa-models.js';
import { hasRealModel, importRealModel } from '../../../../test/real-model.js';
import { type InstalledModel, MANIFEST_FILE, readManifest } from '../../model-dir/manifest.js';
import type * as engineModule from './engine.js';
import { onlineRecognizerConfig } from './online-config.js';
import { onlineHandler } from './online-sessions.js';
import type { OnlineEvent, OnlineReply } from './online-worker-messages.js';

let root: string;
let generated: InstalledModel;
let compiled: typeof engineModule;

beforeAll(async () => {
  root = tempDir('sherpa-batches-');
  const dir = path.join(root, 'stream');
  mkdirSync(dir, { recursive: true });
  writeEnergyStreamingModel(dir);
  const files = { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' };
  writeFileSync(path.join(dir, MANIFEST_FILE), JSON.stringify({ id: 'stream-v1', family: 'stt-streaming', type: 'transducer', files, languages: ['en'] }));
  generated = readManifest(dir);
  const dist = path.join(ROOT, 'dist', 'engines', 'stt', 'sherpa', 'engine.js');
  if (!existsSync(dist)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  compiled = (await import(pathToFileURL(dist).href)) as typeof engineModule;
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Each session's audio: a different number of bursts at different places, so their words differ. */
const audios = [toneBursts(3, { gapMs: 700 }), toneBursts(5, { gapMs: 300, leadMs: 130 }), toneBursts(2, { burstMs: 500, gapMs: 900, leadMs: 60 })];
const PIECE = 320; // 20 ms

/** Every session fed in 20 ms pieces, each piece's calls issued together (batched) or awaited one by one. */
async function run(batches: boolean, together: boolean): Promise<OnlineEvent[][]> {
  const handle = onlineHandler();
  await handle({ op: 'load', config: onlineRecognizerConfig(generated), batches });
  const events: OnlineEvent[][] = audios.map(() => []);
  const take = (k: number, r: OnlineReply) => 'events' in r && events[k]!.push(...r.events);
  for (let k = 0; k < audios.length; k++) await handle({ op: 'open', session: k, endpointMs: 600, settleMs: 0 });
  const longest = Math.max(...audios.map((a) => a.pcm16.length));
  for (let at = 0; at < longest; at += PIECE) {
    const calls = audios.map(
      (a, k) => () => (at < a.pcm16.length ? handle({ op: 'audio', session: k, samples: a.pcm16.slice(at, at + PIECE) }) : { ok: true as const }),
    );
    if (together) (await Promise.all(calls.map((c) => c()))).forEach((r, k) => take(k, r));
    else for (const [k, c] of calls.entries()) take(k, await c());
  }
  for (let k = 0; k < audios.length; k++) take(k, await handle({ op: 'finalize', session: k, end: true }));
  return events;
}

describe('live sessions of a streaming model decoded in batches', () => {
  it('give each session the words and times it gets decoded alone', async () => {
    const alone = await run(false, false);
    const batched = await run(true, true);
    expect(batched).toEqual(alone);
    // Each session heard its own bursts: one "yes" per burst, in its final tokens.
    alone.forEach((events, k) => {
      const words = events.filter((e) => e.type === 'final').flatMap((e) => e.tokens.map((t) => t.text));
      expect(words).toHaveLength(audios[k]!.bursts.length);
    });
  });

  it('are found possible by the check in a child process for a model whose encoder takes a batch', async () => {
    expect(await compiled.checkModel(generated, 'online', onlineRecognizerConfig(generated))).toEqual({ batches: true });
  });

  it.runIf(hasRealModel)(
    'are not used for the real zipformer exported with a batch of 1, which still checks as usable',
    async () => {
      const dataDir = path.join(root, 'real');
      await importRealModel(dataDir, 'gigaspeech-kws-3m-v1');
      const model = readManifest(path.join(dataDir, 'models', 'gigaspeech-kws-3m-v1'));
      expect(await compiled.checkModel(model, 'online', onlineRecognizerConfig(model))).toEqual({ batches: false });
    },
    120_000,
  );
});
